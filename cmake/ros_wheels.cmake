# Building rosidl interface packages against the ROS 2 `ros-*` wheels from PyPI (pip path, through
# scikit-build-core). Shared by vehicle_sim's own CMakeLists.txt and the interface packages under
# interfaces/. Harmless in a ROS 2 workspace (colcon): every step is guarded.

# In a pip build (SKBUILD): every prefix that holds a site-packages on sys.path (the target venv
# and, under pip build isolation, pip's overlay env) is where the wheels' CMake configs and ament
# index live.
macro(vsim_use_wheel_prefixes)
  if(DEFINED SKBUILD)
    execute_process(COMMAND "${Python_EXECUTABLE}" -c
      "import sys,os;print(';'.join(dict.fromkeys([sys.prefix]+[p.split(os.sep+'lib'+os.sep+'python')[0] for p in sys.path if p.endswith('site-packages')])))"
      OUTPUT_VARIABLE _vsim_prefixes OUTPUT_STRIP_TRAILING_WHITESPACE)
    message(STATUS "ROS wheel prefixes: ${_vsim_prefixes}")
    list(PREPEND CMAKE_PREFIX_PATH ${_vsim_prefixes})
    string(REPLACE ";" ":" _vsim_ament "${_vsim_prefixes}")
    set(ENV{AMENT_PREFIX_PATH} "${_vsim_ament}")
    set(Python3_EXECUTABLE "${Python_EXECUTABLE}")
    set(BUILD_TESTING OFF)
  endif()
endmacro()

# The wheels' exported targets name an include dir of their build host (/opt/python/...) that
# does not exist here; configure fails on it. Drop such entries from every imported target.
function(vsim_drop_missing_wheel_includes)
  get_directory_property(_imported IMPORTED_TARGETS)
  foreach(_t IN LISTS _imported)
    get_target_property(_inc ${_t} INTERFACE_INCLUDE_DIRECTORIES)
    if(_inc)
      set(_new "")
      foreach(_d IN LISTS _inc)
        if(_d MATCHES "^/opt/python/" AND NOT EXISTS "${_d}")
          continue()
        endif()
        list(APPEND _new "${_d}")
      endforeach()
      set_target_properties(${_t} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_new}")
    endif()
  endforeach()
endfunction()

# In a pip build, drop the egg-info ament_python_install_package writes for package `name`: the
# wheel has its own dist-info, and two distributions of one package confuse pip.
function(vsim_drop_ament_egg_info name)
  if(DEFINED SKBUILD)
    install(CODE "file(GLOB _egg \"\${CMAKE_INSTALL_PREFIX}/${PYTHON_INSTALL_DIR}/${name}-*.egg-info\")
                  file(REMOVE_RECURSE \${_egg})")
  endif()
endfunction()
