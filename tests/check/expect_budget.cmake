# nbcx-check's budget (--budget-s, --max-mem, --fit): a check over it is
# not run, or run on fewer ranks with --fit, and says so; the exit status
# is then 3 (no errors found, not everything requested checked), never 0.
function(run expect_rc)
  execute_process(COMMAND ${CMD} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expect_rc)
    message(FATAL_ERROR "nbcx-check ${ARGN}: exit status ${rc}, expected "
                        "${expect_rc}\n${out}${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

function(expect what)
  if(NOT out MATCHES "${what}")
    message(FATAL_ERROR "no '${what}' in the output:\n${out}")
  endif()
endfunction()

# p^2 messages at 100,000 ranks: far over the default budget, not run
run(3 --op alltoall --alg pairwise --ranks 100000)
expect("OVER BUDGET: estimated [0-9]+ s, [0-9.]+ GiB, 1e\\+10 messages")
expect("not checked; fits up to about [0-9]+ ranks")
expect("1 checks: 0 proven, 0 failed, 0 skipped .*, 1 over budget \\(not checked\\)")

# --fit: checked on the largest size within a small memory budget
run(3 --op alltoall --alg pairwise --ranks 3000 --max-mem 64M --fit)
expect("fits up to about [0-9]+ ranks")
expect("\\(fitted, instead of 3000\\):")
expect("  ok nodes=")
expect("1 checks: 1 proven, 0 failed, 0 skipped .*, 1 over budget \\(checked on fewer ranks\\)")

# within the budget: checked as asked, status 0
run(0 --op bcast --alg binomial --ranks 100000)
expect("  ok nodes=")
# no budget at all
run(0 --op alltoall --alg linear --ranks 1500 --budget-s 0 --max-mem 0 --quiet)
expect("1 checks: 1 proven")
