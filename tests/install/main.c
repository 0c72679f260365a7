/* Links against the installed libkiln through find_package(kiln) and makes a handle (no GPU needed). */
#include <kiln/kiln.h>
#include <stdio.h>
int main(void) { kiln_handle h; kiln_status s = kiln_create(&h); printf("%s\n", kiln_status_string(s)); return kiln_destroy(h) != KILN_STATUS_SUCCESS; }
