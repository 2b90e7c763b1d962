// fabricsim-sim: run a scenario, validate it, or explain the configuration schema.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <systemc>

#include "fabricsim/core/config.h"
#include "fabricsim/platforms/platform.h"
#include "fabricsim/platforms/scenario.h"
#include "fabricsim/platforms/scenario_runner.h"

namespace {

const char* USAGE =
    "usage: fabricsim-sim SCENARIO.yaml [--set key=value]... [--out DIR] [--quiet] [--lockstep]\n"
    "       fabricsim-sim validate SCENARIO.yaml [--set key=value]...\n"
    "       fabricsim-sim explain [key]\n";

}  // namespace

int sc_main(int argc, char* argv[]) {
    using namespace fabricsim;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "-h" || args[0] == "--help") {
        std::cout << USAGE;
        return args.empty() ? 2 : 0;
    }
    if (args[0] == "explain") {
        const std::string key = args.size() > 1 ? args[1] : "";
        if (!platforms::scenario_schema().explain(std::cout, key)) {
            std::cerr << "fabricsim-sim: no parameter matches '" << key << "'\n";
            return 2;
        }
        return 0;
    }
    bool validate_only = false;
    std::size_t i = 0;
    if (args[0] == "validate") {
        validate_only = true;
        i = 1;
    }
    std::string file, out;
    std::vector<std::string> sets;
    bool quiet = false;
    bool lockstep = false;  // wake the scheduler from the kernel for every expiry (same results, slower)
    for (; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--set" && i + 1 < args.size()) sets.push_back(args[++i]);
        else if (a.rfind("--set=", 0) == 0) sets.push_back(a.substr(6));
        else if (a == "--out" && i + 1 < args.size()) out = args[++i];
        else if (a == "--quiet") quiet = true;
        else if (a == "--lockstep") lockstep = true;
        else if (!a.empty() && a[0] == '-') {
            std::cerr << "fabricsim-sim: unknown option '" << a << "'\n" << USAGE;
            return 2;
        } else if (file.empty()) file = a;
        else {
            std::cerr << "fabricsim-sim: more than one scenario given\n" << USAGE;
            return 2;
        }
    }
    if (file.empty()) {
        std::cerr << USAGE;
        return 2;
    }
    platforms::scenario sc;
    try {
        sc = platforms::prepare_scenario({platforms::scenario_source::origin::FILE, file, sets, ""});
        if (sc.echo["results"]["format"].as<std::string>() == "parquet")
            throw config_error("results.format", "parquet is written by the Python front end (fabricsim.run(), "
                                                 "`fabricsim run`); fabricsim-sim writes csv");
    } catch (const config_error& e) {
        std::cerr << "fabricsim-sim: configuration error: " << e.what() << "\n";
        return 2;
    }
    if (validate_only) {
        std::cout << file << ": valid (" << platforms::describe_counts(sc) << ")\n";
        return 0;
    }
    if (out.empty()) out = "results/" + sc.name;
    try {
        const auto r = platforms::run_scenario(sc, out, !lockstep);
        if (!quiet) {
            platforms::print_summary(r.summary, std::cout);
            std::cout << "\n  results written to " << out << "/\n";
        }
        return r.summary["frames"]["conserved"].get<bool>() ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "fabricsim-sim: " << e.what() << "\n";
        return 1;
    }
}

// Our own main (it takes precedence over libsystemc's) so the banner can be switched off
// before the kernel prints it.
int main(int argc, char* argv[]) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    return sc_core::sc_elab_and_sim(argc, argv);
}
