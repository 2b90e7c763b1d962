// placeholder: filled in by issue 3 work
#include <catch2/catch.hpp>
