# Sourced by the block-scale probe scripts (block_scale_cost_run.sh, block_scale_prof.sh, predesc_device.sh,
# uniform_wg_device.sh): the two kernels they time. pair_kernel NAME sets K, the solution, and F, kiln_bench's scale
# flag: a build named fp8* runs the promoted fp8 tile, any other the block-scaled 128x128 wg2x1 pgr 4 tile (the
# M >= 1024 pick) of the same shape and ring.
pair_kernel() {
  local p=_PLR0_SU0_SUS0_SUM0_LPA0_LPB0_LXS1_GSU1_WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_PK1_PR
  case $1 in
    fp8*) K=Cijk_Alik_Bljk_F8F8B_MT128x128x128_WG2x1_MI64x128x32_PGR4${p}1_MC0_SAB0_WGMMA_SM90 F= ;;
    *) K=Cijk_Alik_Bljk_F8F8BQ_MT128x128x128_WG2x1_MI64x128x32_PGR4${p}0_MC0_SAB0_WGMMA_SM90 F=--block-scales ;;
  esac
}
