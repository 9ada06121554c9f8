# run_cg_f90.cmake -DRUN=mpiexec|-n|N|app_cg_f90|args -DSHIM=0|1 -DNP=N
#   -DNBCX_RUN=path: runs the Fortran CG's blocking variant natively, then
# its native-nb variant natively (SHIM=0) or under nbcx-run (SHIM=1), and
# fails unless both verify, take the same iterations to the same relative
# residual (the same arithmetic in the same order), and, under the shim,
# the shim's report counts every collective of the native-nb variant
# (an iallgatherv and an iallreduce per iteration and rank) as served by
# nbcx, none native.
string(REPLACE "|" ";" run "${RUN}")
function(cg_run out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message("${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run_cg_f90: exit status ${rc}: ${ARGN}")
  endif()
  if(NOT out MATCHES "RESULT cg_f90 [^\n]* iterations=([0-9]+) [^\n]*rel_residual=([^ ]+) [^\n]*verified=yes")
    message(FATAL_ERROR "run_cg_f90: not verified: ${ARGN}")
  endif()
  set(${out_var} "${CMAKE_MATCH_1} ${CMAKE_MATCH_2}" PARENT_SCOPE)
  set(${out_var}_err "${err}" PARENT_SCOPE)
endfunction()
cg_run(blocking ${run} --variant blocking)
if(SHIM)
  cg_run(nb ${NBCX_RUN} ${run} --variant native-nb)
else()
  cg_run(nb ${run} --variant native-nb)
endif()
if(NOT blocking STREQUAL nb)
  message(FATAL_ERROR "run_cg_f90: blocking took '${blocking}' (iterations, "
                      "residual), native-nb '${nb}'")
endif()
if(SHIM)
  string(REGEX MATCH "^[0-9]+" it "${nb}")
  math(EXPR want "2 * ${it} * ${NP}")
  if(NOT nb_err MATCHES "nbcx-pmpi:   total ([0-9]+) nbcx, ([0-9]+) native")
    message(FATAL_ERROR "run_cg_f90: no report from the shim")
  endif()
  if(NOT CMAKE_MATCH_1 EQUAL want OR NOT CMAKE_MATCH_2 EQUAL 0)
    message(FATAL_ERROR "run_cg_f90: the shim served ${CMAKE_MATCH_1} and "
                        "sent ${CMAKE_MATCH_2} native; the program made ${want}")
  endif()
  message("run_cg_f90: ${want} collectives, all served by nbcx")
endif()
