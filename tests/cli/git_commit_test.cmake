# cmake -DSCRIPT=tools/cli/git_commit.cmake -DWORK_DIR=<scratch> -P git_commit_test.cmake
#
# The commit `minigraph --version` names, found without a git binary: fake checkouts with a
# loose ref, a packed ref, a detached HEAD, a worktree link, and none at all ("unknown"); and
# the generated file is left untouched when the commit did not change (so nothing relinks).
cmake_minimum_required(VERSION 3.20)

set(A "aaaaaaaaaaaa1111111111111111111111111111")
set(B "bbbbbbbbbbbb2222222222222222222222222222")
set(C "cccccccccccc3333333333333333333333333333")
set(D "dddddddddddd4444444444444444444444444444")

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(expect_commit name source expected)
  set(out "${WORK_DIR}/${name}.cpp")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${source} -DOUTPUT=${out} -DCEILING_DIR=${WORK_DIR}
            -P ${SCRIPT}
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name}: the script failed (${rc})")
  endif()
  file(READ "${out}" text)
  if(NOT text MATCHES "return \"${expected}\";")
    message(FATAL_ERROR "${name}: expected commit '${expected}', got:\n${text}")
  endif()
  message(STATUS "${name}: ${expected}")
endfunction()

# A loose ref, found from a subdirectory of the checkout.
file(WRITE "${WORK_DIR}/loose/.git/HEAD" "ref: refs/heads/main\n")
file(WRITE "${WORK_DIR}/loose/.git/refs/heads/main" "${A}\n")
file(MAKE_DIRECTORY "${WORK_DIR}/loose/src/deep")
expect_commit(loose "${WORK_DIR}/loose/src/deep" "aaaaaaaaaaaa")

# Only in packed-refs (after git gc).
file(WRITE "${WORK_DIR}/packed/.git/HEAD" "ref: refs/heads/topic\n")
file(WRITE "${WORK_DIR}/packed/.git/packed-refs"
     "# pack-refs with: peeled fully-peeled sorted\n${A} refs/heads/main\n${B} refs/heads/topic\n")
expect_commit(packed "${WORK_DIR}/packed" "bbbbbbbbbbbb")

# A detached HEAD holds the commit.
file(WRITE "${WORK_DIR}/detached/.git/HEAD" "${C}\n")
expect_commit(detached "${WORK_DIR}/detached" "cccccccccccc")

# A worktree: .git is a file naming its git directory, whose refs live in the common one.
file(WRITE "${WORK_DIR}/main-repo/.git/refs/heads/feature" "${D}\n")
file(WRITE "${WORK_DIR}/main-repo/.git/worktrees/wt/HEAD" "ref: refs/heads/feature\n")
file(WRITE "${WORK_DIR}/main-repo/.git/worktrees/wt/commondir" "../..\n")
file(WRITE "${WORK_DIR}/wt/.git" "gitdir: ../main-repo/.git/worktrees/wt\n")
expect_commit(worktree "${WORK_DIR}/wt" "dddddddddddd")

# No checkout at all.
file(MAKE_DIRECTORY "${WORK_DIR}/plain")
expect_commit(plain "${WORK_DIR}/plain" "unknown")

# Unchanged commit: the file is not rewritten (its time, set back to 2001, stays). A new
# commit: it is.
execute_process(COMMAND touch -d @1000000000 "${WORK_DIR}/loose.cpp")
expect_commit(loose "${WORK_DIR}/loose" "aaaaaaaaaaaa")
file(TIMESTAMP "${WORK_DIR}/loose.cpp" after "%s" UTC)
if(NOT after STREQUAL "1000000000")
  message(FATAL_ERROR "the generated file was rewritten for an unchanged commit")
endif()
file(WRITE "${WORK_DIR}/loose/.git/refs/heads/main" "${B}\n")
expect_commit(loose "${WORK_DIR}/loose" "bbbbbbbbbbbb")
message(STATUS "PASS")
