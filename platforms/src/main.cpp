// fabricsim-sim: run a scenario, validate it, explain the configuration schema, or size PFC
// headroom.
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <systemc>

#include "fabricsim/core/config.h"
#include "fabricsim/platforms/headroom_report.h"
#include "fabricsim/platforms/platform.h"
#include "fabricsim/platforms/scenario.h"
#include "fabricsim/platforms/scenario_runner.h"

namespace {

const char* const USAGE =
    "usage: fabricsim-sim SCENARIO.yaml [--set key=value]... [--seed N] [--out DIR] [--overwrite]\n"
    "                     [--quiet] [--progress] [--lockstep] [--check-invariants[=0|1]]\n"
    "       fabricsim-sim validate SCENARIO.yaml [--set key=value]... [--seed N]\n"
    "       fabricsim-sim explain [key]\n"
    "       fabricsim-sim headroom --rate RATE --cable-length M [option VALUE]... [--json]\n"
    "       fabricsim-sim --version\n";

/// Writes `text` to standard output. A reader that went away (`| head`) is not an error: the
/// results folder is complete, the table is only a copy. Returns false on any other failure.
bool print_stdout(const std::string& text) {
    if (std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0)
        return true;
    if (errno == EPIPE) return true;
    std::cerr << "fabricsim-sim: cannot write standard output: " << std::strerror(errno) << "\n";
    return false;
}

/// "--cable-length" for the option "cable_length".
std::string option_flag(const std::string& name) {
    std::string f = "--" + name;
    for (char& c : f)
        if (c == '_') c = '-';
    return f;
}

std::string headroom_usage() {
    std::ostringstream u;
    u << "usage: fabricsim-sim headroom --rate RATE --cable-length M [option VALUE]... [--json]\n"
         "PFC headroom (XOFF_TH) of one lossless port and priority group (docs/models/pfc.md).\n"
         "Options (default for method model / sonic; '-' = not an input of that method):\n";
    for (const auto& o : fabricsim::platforms::headroom_options()) {
        const std::string m = *o.model_default ? o.model_default : "none";
        const std::string s = *o.sonic_default ? o.sonic_default : "none";
        u << "  " << option_flag(o.name) << " [" << m << " / " << s << "]\n      " << o.help
          << "\n";
    }
    u << "  --json\n      print the result as JSON\n";
    return u.str();
}

/// `fabricsim-sim headroom ...`: exit 0, or 2 on a bad option or value.
int headroom_command(const std::vector<std::string>& args) {
    std::map<std::string, std::string> options;
    bool json = false;
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "-h" || a == "--help") return print_stdout(headroom_usage()) ? 0 : 1;
        if (a == "--json") {
            json = true;
            continue;
        }
        if (a.rfind("--", 0) != 0) {
            std::cerr << "fabricsim-sim headroom: unexpected argument '" << a << "'\n"
                      << headroom_usage();
            return 2;
        }
        std::string name = a.substr(2), value;
        const auto eq = name.find('=');
        if (eq != std::string::npos) {
            value = name.substr(eq + 1);
            name.resize(eq);
        } else if (i + 1 < args.size()) {
            value = args[++i];
        } else {
            std::cerr << "fabricsim-sim headroom: " << a << " needs a value\n";
            return 2;
        }
        for (char& c : name)
            if (c == '-') c = '_';
        options[name] = value;
    }
    try {
        const nlohmann::json report = fabricsim::platforms::headroom_report(options);
        std::ostringstream text;
        if (json)
            text << report.dump(2) << "\n";
        else
            fabricsim::platforms::print_headroom(report, text);
        return print_stdout(text.str()) ? 0 : 1;
    } catch (const fabricsim::config_error& e) {
        std::cerr << "fabricsim-sim headroom: " << option_flag(e.key()) << ": " << e.reason()
                  << "\n";
        return 2;
    }
}

}  // namespace

int sc_main(int argc, char* argv[]) {
    using namespace fabricsim;
    // A closed pipe on stdout gives EPIPE (handled in print_stdout) instead of killing us.
    std::signal(SIGPIPE, SIG_IGN);
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "-h" || args[0] == "--help") {
        std::cout << USAGE;
        return args.empty() ? 2 : 0;
    }
    if (args[0] == "--version") {
        std::ostringstream v;
        v << "fabricsim-sim " << platforms::VERSION << " (SystemC " << SC_VERSION_MAJOR << '.'
          << SC_VERSION_MINOR << '.' << SC_VERSION_PATCH << ")\n";
        return print_stdout(v.str()) ? 0 : 1;
    }
    if (args[0] == "explain") {
        const std::string key = args.size() > 1 ? args[1] : "";
        std::ostringstream text;
        if (!platforms::scenario_schema().explain(text, key)) {
            std::cerr << "fabricsim-sim: no parameter matches '" << key << "'\n";
            return 2;
        }
        return print_stdout(text.str()) ? 0 : 1;
    }
    if (args[0] == "headroom") return headroom_command(args);
    bool validate_only = false;
    std::size_t i = 0;
    if (args[0] == "validate") {
        validate_only = true;
        i = 1;
    }
    std::string file, out;
    std::vector<std::string> sets;
    bool quiet = false, progress = false, overwrite = false;
    bool lockstep =
        false;  // wake the scheduler from the kernel for every expiry (same results, slower)
    bool check_invariants = fabricsim::invariant_checks_by_default();
    for (; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--set" && i + 1 < args.size())
            sets.push_back(args[++i]);
        else if (a.rfind("--set=", 0) == 0)
            sets.push_back(a.substr(6));
        else if (a == "--seed" && i + 1 < args.size())
            sets.push_back("seed=" + args[++i]);
        else if (a.rfind("--seed=", 0) == 0)
            sets.push_back("seed=" + a.substr(7));
        else if (a == "--out" && i + 1 < args.size())
            out = args[++i];
        else if (a == "--overwrite")
            overwrite = true;
        else if (a == "--quiet")
            quiet = true;
        else if (a == "--progress")
            progress = true;
        else if (a == "--lockstep")
            lockstep = true;
        else if (a == "--check-invariants" || a == "--check-invariants=1")
            check_invariants = true;
        else if (a == "--check-invariants=0")
            check_invariants = false;
        else if (!a.empty() && a[0] == '-') {
            std::cerr << "fabricsim-sim: unknown option '" << a << "'\n" << USAGE;
            return 2;
        } else if (file.empty())
            file = a;
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
        sc =
            platforms::prepare_scenario({platforms::scenario_source::origin::FILE, file, sets, ""});
        if (sc.echo["results"]["format"].as<std::string>() == "parquet")
            throw config_error("results.format",
                               "parquet is written by the Python front end (fabricsim.run(), "
                               "`fabricsim run`); fabricsim-sim writes csv");
    } catch (const config_error& e) {
        std::cerr << "fabricsim-sim: configuration error: " << e.what() << "\n";
        return 2;
    }
    if (validate_only)
        return print_stdout(file + ": valid (" + platforms::describe_counts(sc) + ")\n") ? 0 : 1;
    if (out.empty()) out = "results/" + sc.name;
    try {
        platforms::run_options opt;
        opt.run_ahead = !lockstep;
        opt.check_invariants = check_invariants;
        opt.overwrite = overwrite;
        opt.progress = progress || (!quiet && isatty(STDERR_FILENO));
        const auto r = platforms::run_scenario(sc, out, opt);
        if (r.stop_signal)
            std::cerr << "fabricsim-sim: stopped by "
                      << (r.stop_signal == SIGTERM ? "SIGTERM" : "SIGINT") << " at "
                      << r.summary["sim_time_s"].get<double>() << " s simulated; results so far in "
                      << out << "/\n";
        if (!quiet) {
            std::ostringstream table;
            platforms::print_summary(r.summary, table);
            table << "\n  results written to " << out << "/\n";
            if (!print_stdout(table.str())) return 1;
        }
        if (r.stop_signal) return 128 + r.stop_signal;
        return r.summary["frames"]["conserved"].get<bool>() ? 0 : 1;
    } catch (const config_error& e) {
        std::cerr << "fabricsim-sim: " << e.what() << "\n";
        return 2;
    } catch (const invariant_violation& e) {
        // A model defect, not the user's: no results folder is trustworthy past this point.
        std::cerr << "fabricsim-sim: " << e.what() << "\n";
        return 3;
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
