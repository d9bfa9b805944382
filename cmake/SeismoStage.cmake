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
  target_include_directories(seismo_${name} PUBLIC ${PROJECT_SOURCE_DIR}/include
                                             PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(seismo_${name} PRIVATE ${SEISMO_WARNINGS})
  target_compile_definitions(seismo_${name} PRIVATE SEISMO_VERSION="${PROJECT_VERSION}")
  foreach(dep IN LISTS ARG_DEPS)
    if(dep MATCHES "^seismo_" AND NOT TARGET ${dep})
      continue()
    endif()
    target_link_libraries(seismo_${name} PUBLIC ${dep})
  endforeach()
endfunction()
