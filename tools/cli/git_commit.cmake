# cmake -DSOURCE_DIR=<checkout> -DOUTPUT=<file.cpp> [-DCEILING_DIR=<dir>] -P git_commit.cmake
#
# Writes OUTPUT, defining mg::cli::build_commit(): the commit HEAD names in the git checkout
# holding SOURCE_DIR, or "unknown" outside one. Reads .git itself (HEAD, loose refs,
# packed-refs, worktree links), so no git binary is needed. OUTPUT is rewritten only when the
# commit changed, so an unchanged commit relinks nothing. Run at every build by the target
# minigraph_cli_commit (tools/CMakeLists.txt).
cmake_minimum_required(VERSION 3.20)

set(commit "unknown")

# The git directory: SOURCE_DIR/.git or one above it; a file ".git" ("gitdir: path") for
# worktrees and submodules. The search stops at CEILING_DIR when given (for tests).
set(dir "${SOURCE_DIR}")
set(git_dir "")
while(TRUE)
  if(IS_DIRECTORY "${dir}/.git")
    set(git_dir "${dir}/.git")
    break()
  elseif(EXISTS "${dir}/.git")
    file(READ "${dir}/.git" link)
    if(link MATCHES "gitdir: *([^\r\n]+)")
      set(git_dir "${CMAKE_MATCH_1}")
      if(NOT IS_ABSOLUTE "${git_dir}")
        set(git_dir "${dir}/${git_dir}")
      endif()
    endif()
    break()
  endif()
  if(DEFINED CEILING_DIR AND dir STREQUAL CEILING_DIR)
    break()
  endif()
  get_filename_component(parent "${dir}" DIRECTORY)
  if(parent STREQUAL dir OR parent STREQUAL "")
    break()
  endif()
  set(dir "${parent}")
endwhile()

if(git_dir AND EXISTS "${git_dir}/HEAD")
  # Refs live in the common directory of a worktree's main checkout.
  set(common_dir "${git_dir}")
  if(EXISTS "${git_dir}/commondir")
    file(READ "${git_dir}/commondir" common)
    string(STRIP "${common}" common)
    if(IS_ABSOLUTE "${common}")
      set(common_dir "${common}")
    else()
      set(common_dir "${git_dir}/${common}")
    endif()
  endif()

  file(READ "${git_dir}/HEAD" head)
  string(STRIP "${head}" head)
  if(head MATCHES "^ref: *(.+)$")
    set(ref "${CMAKE_MATCH_1}")
    set(hash "")
    foreach(base IN ITEMS "${git_dir}" "${common_dir}")
      if(NOT hash AND EXISTS "${base}/${ref}")
        file(READ "${base}/${ref}" hash)
        string(STRIP "${hash}" hash)
      endif()
    endforeach()
    if(NOT hash AND EXISTS "${common_dir}/packed-refs")
      file(STRINGS "${common_dir}/packed-refs" packed REGEX " ${ref}$")
      if(packed)
        list(GET packed 0 line)
        string(REGEX REPLACE " .*" "" hash "${line}")
      endif()
    endif()
  else()
    set(hash "${head}")  # a detached HEAD holds the commit itself
  endif()
  if(hash MATCHES "^[0-9a-f]+$")
    string(LENGTH "${hash}" length)
    if(length GREATER_EQUAL 12)
      string(SUBSTRING "${hash}" 0 12 commit)
    endif()
  endif()
endif()

set(content "// Generated at build time by tools/cli/git_commit.cmake: do not edit.
namespace mg::cli {
const char* build_commit();  // declared in tools/cli/commands.h
const char* build_commit() { return \"${commit}\"; }
}  // namespace mg::cli
")
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()
