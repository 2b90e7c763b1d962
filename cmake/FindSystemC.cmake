# Finds Debian's libsystemc-dev (SystemC 2.3.x with bundled TLM-2.0).
# Defines the imported target SystemC::systemc with its headers as SYSTEM includes.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
    pkg_check_modules(PC_SYSTEMC QUIET systemc)
endif()
find_path(SystemC_INCLUDE_DIR systemc HINTS ${PC_SYSTEMC_INCLUDE_DIRS} PATHS /usr/include /usr/local/include)
find_library(SystemC_LIBRARY systemc HINTS ${PC_SYSTEMC_LIBRARY_DIRS})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(SystemC REQUIRED_VARS SystemC_LIBRARY SystemC_INCLUDE_DIR)
if(SystemC_FOUND AND NOT TARGET SystemC::systemc)
    add_library(SystemC::systemc UNKNOWN IMPORTED)
    set_target_properties(SystemC::systemc PROPERTIES
        IMPORTED_LOCATION "${SystemC_LIBRARY}"
        INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${SystemC_INCLUDE_DIR}"
        INTERFACE_INCLUDE_DIRECTORIES "${SystemC_INCLUDE_DIR}")
endif()
