// The VCD writer: the exact header (scopes from the signal paths, one $var each), $dumpvars at
// the first sample, then only changed values under a time stamp, none when nothing changed.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "fabricsim/core/vcd_writer.h"

using namespace fabricsim;

namespace {

std::string read_all(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

}  // namespace

TEST_CASE("vcd_writer: header, first dump, then changes only", "[core][vcd]") {
    const std::string path =
        (std::filesystem::temp_directory_path() / "fabricsim_test_vcd_writer.vcd").string();
    {
        vcd_writer w(path, "top",
                     {{"leaf0.p3_frame_bytes", false},
                      {"leaf0.p3.fera_rho", true},
                      {"leaf0.buffer_cell_bytes", false},
                      {"h0_nic.pacer_rate_bps", false}});
        w.sample(0, {"0", "0.5", "0", "100"});
        w.sample(10'000'000, {"0", "0.5", "0", "100"});  // nothing changed: no time stamp
        w.sample(20'000'000, {"1538", "0.5", "208", "100"});
        w.sample(30'000'000, {"0", "1e-07", "208", "18446744073709551615"});
        w.file().close();
    }
    CHECK(read_all(path) ==
          "$version FabricSim $end\n"
          "$timescale 1 ps $end\n"
          "$scope module top $end\n"
          "$scope module leaf0 $end\n"
          "$var wire 64 ! p3_frame_bytes $end\n"
          "$scope module p3 $end\n"
          "$var real 64 \" fera_rho $end\n"
          "$upscope $end\n"
          "$var wire 64 # buffer_cell_bytes $end\n"
          "$upscope $end\n"
          "$scope module h0_nic $end\n"
          "$var wire 64 $ pacer_rate_bps $end\n"
          "$upscope $end\n"
          "$upscope $end\n"
          "$enddefinitions $end\n"
          "#0\n"
          "$dumpvars\n"
          "b0 !\n"
          "r0.5 \"\n"
          "b0 #\n"
          "b1100100 $\n"
          "$end\n"
          "#20000000\n"
          "b11000000010 !\n"
          "b11010000 #\n"
          "#30000000\n"
          "b0 !\n"
          "r1e-07 \"\n"
          "b" +
              std::string(64, '1') + " $\n");
    std::filesystem::remove(path);
}

TEST_CASE("vcd_writer: identifiers stay unique past 94 signals", "[core][vcd]") {
    const std::string path =
        (std::filesystem::temp_directory_path() / "fabricsim_test_vcd_ids.vcd").string();
    std::vector<vcd_writer::signal> s;
    for (int i = 0; i < 200; ++i) s.push_back({"s" + std::to_string(i), false});
    {
        vcd_writer w(path, "top", s);
        w.file().close();
    }
    std::istringstream in(read_all(path));
    std::set<std::string> ids;
    for (std::string line; std::getline(in, line);)
        if (line.rfind("$var", 0) == 0) ids.insert(line.substr(13, line.find(' ', 13) - 13));
    CHECK(ids.size() == 200u);
    std::filesystem::remove(path);
}
