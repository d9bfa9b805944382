# seismo_unity(TARGET): a unity build of TARGET when SEISMO_UNITY is on (the top CMakeLists.txt).
function(seismo_unity target)
  if(SEISMO_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
    # g++ takes the batched .cc files for headers, and warns of a class there whose member's
    # type is in an anonymous namespace (true of a .cc file's own classes, and harmless).
    target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-subobject-linkage>)
  endif()
endfunction()

# seismo_stage(NAME DEPS ...): one static library per pipeline stage, built from
# src/NAME/*.cc, public headers under include/seismo/NAME/. Stages that have no
# sources yet are skipped, and so are dependencies on them.
function(seismo_stage name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${name}/*.cc)
  if(NOT sources)
    return()
  endif()
  add_library(seismo_${name} STATIC ${sources})
  set_property(GLOBAL APPEND PROPERTY SEISMO_STAGES ${name})
  target_include_directories(seismo_${name} PUBLIC ${PROJECT_SOURCE_DIR}/include
                                             PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(seismo_${name} PRIVATE ${SEISMO_WARNINGS})
  target_compile_definitions(seismo_${name} PRIVATE SEISMO_VERSION="${PROJECT_VERSION}")
  seismo_unity(seismo_${name})
  foreach(dep IN LISTS ARG_DEPS)
    if(dep MATCHES "^seismo_" AND NOT TARGET ${dep})
      continue()
    endif()
    target_link_libraries(seismo_${name} PUBLIC ${dep})
    if(dep MATCHES "^seismo_(.*)$")
      set_property(GLOBAL APPEND PROPERTY SEISMO_STAGE_DEPS_${name} ${CMAKE_MATCH_1})
    endif()
  endforeach()
endfunction()

# seismo_stage_closure(OUT stage...): the stages given and every stage they depend on,
# directly or through their dependencies.
function(seismo_stage_closure out)
  set(allowed ${ARGN})
  set(queue ${ARGN})
  while(queue)
    list(POP_FRONT queue current)
    get_property(deps GLOBAL PROPERTY SEISMO_STAGE_DEPS_${current})
    foreach(dep IN LISTS deps)
      if(NOT dep IN_LIST allowed)
        list(APPEND allowed ${dep})
        list(APPEND queue ${dep})
      endif()
    endforeach()
  endwhile()
  set(${out} ${allowed} PARENT_SCOPE)
endfunction()

# seismo_check_includes(ERRORS owner allowed files): appends to ERRORS a line for each
# include of a stage's header -- public "seismo/<stage>/..." or, from tests, the stage's
# private "<stage>/..." -- whose stage is not in the list `allowed`.
function(seismo_check_includes errors_var owner allowed files)
  get_property(stages GLOBAL PROPERTY SEISMO_STAGES)
  set(errors "${${errors_var}}")
  foreach(file IN LISTS files)
    if(file STREQUAL "")
      continue()
    endif()
    file(STRINGS ${file} lines REGEX "^#include \"(seismo/)?[a-z_]+/")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^#include \"(seismo/)?([a-z_]+)/.*" "\\2" other "${line}")
      if(other IN_LIST stages AND NOT other IN_LIST allowed)
        file(RELATIVE_PATH relative ${PROJECT_SOURCE_DIR} ${file})
        string(APPEND errors "\n  ${relative}: includes ${other}/, but ${owner} does not depend on it")
      endif()
    endforeach()
  endforeach()
  set(${errors_var} "${errors}" PARENT_SCOPE)
endfunction()

# seismo_check_layering(): fails the configure step when a stage's sources or public
# headers include another stage's header ("seismo/<stage>/...") that the stage does not
# depend on, directly or through its dependencies. Every stage sees the whole include/
# directory, so without this check the compiler would not notice (docs/architecture.md).
function(seismo_check_layering)
  get_property(stages GLOBAL PROPERTY SEISMO_STAGES)
  set(errors "")
  foreach(stage IN LISTS stages)
    seismo_stage_closure(allowed ${stage})
    file(GLOB_RECURSE files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${stage}/*.cc
         ${PROJECT_SOURCE_DIR}/src/${stage}/*.h ${PROJECT_SOURCE_DIR}/include/seismo/${stage}/*.h)
    seismo_check_includes(errors "stage ${stage}" "${allowed}" "${files}")
  endforeach()
  # Third-party libraries stay inside the stage that owns them: no other stage's sources, and
  # no public header (not even the owner's), include them.
  foreach(owned IN ITEMS "ingest:librdkafka/" "parse:simdjson" "http:civetweb" "alert:curl/")
    string(REPLACE ":" ";" pair "${owned}")
    list(GET pair 0 owner)
    list(GET pair 1 prefix)
    file(GLOB_RECURSE files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/*.cc ${PROJECT_SOURCE_DIR}/src/*.h
         ${PROJECT_SOURCE_DIR}/include/*.h)
    foreach(file IN LISTS files)
      file(RELATIVE_PATH relative ${PROJECT_SOURCE_DIR} ${file})
      if(relative MATCHES "^src/${owner}/")
        continue()
      endif()
      file(STRINGS ${file} lines REGEX "^#include [<\"]${prefix}")
      if(lines)
        string(APPEND errors "\n  ${relative}: includes ${prefix}, which only src/${owner}/ may include")
      endif()
    endforeach()
  endforeach()
  if(errors)
    message(FATAL_ERROR "seismo: an include crosses the stages' declared dependencies (CMakeLists.txt):${errors}")
  endif()
endfunction()
