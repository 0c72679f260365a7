"""kiln's generator: YAML solution files in, kernel sources, C dispatch tables and CMake lists out."""
