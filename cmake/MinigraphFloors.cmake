# The floors and what each one sees (README, Layout): the one place that says which floor may
# use which. A graph, not a line:
#   framework <- ops <- {models, optim};  framework <- distributed;  train sees all of them;
#   tools (the CLI, benchmarks) see everything through minigraph::minigraph.
# Each floor's library links exactly the floors it sees directly (minigraph_floor_link), which
# also puts their headers on its include path and no others; tests/layers checks every floor's
# includes and undefined symbols against the same graph. Included by the build and by the
# layers test's scripts (cmake -P), so it only sets variables and defines functions.
set(MINIGRAPH_FLOORS framework ops models optim distributed train)
set(MINIGRAPH_FLOOR_SEES_framework "")
set(MINIGRAPH_FLOOR_SEES_ops framework)
set(MINIGRAPH_FLOOR_SEES_models ops)
set(MINIGRAPH_FLOOR_SEES_optim ops)
set(MINIGRAPH_FLOOR_SEES_distributed framework)
set(MINIGRAPH_FLOOR_SEES_train models optim distributed)

# minigraph_floors_below(<floor> <out_var>): every floor <floor> sees, directly or through one
# it sees.
function(minigraph_floors_below floor out_var)
  set(below "")
  set(pending ${MINIGRAPH_FLOOR_SEES_${floor}})
  while(pending)
    list(POP_FRONT pending next)
    if(NOT next IN_LIST below)
      list(APPEND below ${next})
      list(APPEND pending ${MINIGRAPH_FLOOR_SEES_${next}})
    endif()
  endwhile()
  set(${out_var} ${below} PARENT_SCOPE)
endfunction()

# minigraph_floor_link(<floor>): links the library minigraph_<floor> to the floors it sees.
function(minigraph_floor_link floor)
  foreach(below IN LISTS MINIGRAPH_FLOOR_SEES_${floor})
    target_link_libraries(minigraph_${floor} PUBLIC minigraph_${below})
  endforeach()
endfunction()
