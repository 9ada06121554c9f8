# compare.cmake -DNATIVE=cmd|... -DSHIM=cmd|...: runs poisson natively and
# under the shim; both must converge ("reason" > 0) in the same number of
# iterations to residuals within 1e-6 of each other (relative), and the
# shim's report must count the calls of each operation of SERVED as
# served by nbcx, none native.
function(run cmdline prefix)
  string(REPLACE "|" ";" cmd "${cmdline}")
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message("${prefix}: ${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${prefix}: exit status ${rc}\n${err}")
  endif()
  if(NOT out MATCHES "iterations ([0-9]+) residual ([0-9.e+-]+) reason ([0-9-]+)")
    message(FATAL_ERROR "${prefix}: no result line")
  endif()
  set(${prefix}_its ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${prefix}_res ${CMAKE_MATCH_2} PARENT_SCOPE)
  set(${prefix}_err "${err}" PARENT_SCOPE)
endfunction()
set(ENV{NBCX_PMPI} off)
run("${NATIVE}" native)
unset(ENV{NBCX_PMPI})
run("${SHIM}" shim)
if(NOT native_its EQUAL shim_its)
  message(FATAL_ERROR "iterations differ: ${native_its} native, ${shim_its} "
                      "under the shim")
endif()
# |a - b| <= 1e-6 |a| (CMake has no floating point: through math(EXPR) on
# the mantissas would lose the exponent; compare in a tiny Python-free way
# by formatting both to 6 significant digits).
string(REGEX MATCH "^([0-9])\\.([0-9]+)e([+-][0-9]+)$" _ "${native_res}")
set(n1 "${CMAKE_MATCH_1}${CMAKE_MATCH_2}" )
set(ne "${CMAKE_MATCH_3}")
string(REGEX MATCH "^([0-9])\\.([0-9]+)e([+-][0-9]+)$" _ "${shim_res}")
set(s1 "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
set(se "${CMAKE_MATCH_3}")
math(EXPR diff "${n1} - ${s1}")
if(diff LESS 0)
  math(EXPR diff "0 - ${diff}")
endif()
if(NOT ne STREQUAL se OR diff GREATER 1)
  message(FATAL_ERROR "residuals differ: ${native_res} native, ${shim_res} "
                      "under the shim")
endif()
# SERVED (default iallreduce): the operations, |-separated, that must all
# be served by nbcx, none native.
if(NOT SERVED)
  set(SERVED iallreduce)
endif()
string(REPLACE "|" ";" served "${SERVED}")
set(counts "")
foreach(op IN LISTS served)
  if(NOT shim_err MATCHES "${op} +([0-9]+) nbcx +([0-9]+) native")
    message(FATAL_ERROR "the shim's report shows no ${op}")
  endif()
  if(CMAKE_MATCH_1 EQUAL 0 OR NOT CMAKE_MATCH_2 EQUAL 0)
    message(FATAL_ERROR "${op}: ${CMAKE_MATCH_1} served by nbcx, "
                        "${CMAKE_MATCH_2} native")
  endif()
  string(APPEND counts " ${CMAKE_MATCH_1} ${op}")
endforeach()
message("same iterations (${shim_its}) and residual (${shim_res}); served "
        "by nbcx:${counts}")
