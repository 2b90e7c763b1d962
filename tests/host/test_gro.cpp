// GRO: in-order segments of a flow within one poll merge into one delivery of up to 64 KB.
#include <catch2/catch.hpp>
