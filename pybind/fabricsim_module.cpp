// _fabricsim: the Python binding of the scenario runner (scenario_runner.h, platform.h).
// Reading and validating a scenario is pure C++ and may run in any process; run() elaborates
// SystemC and therefore runs at most once per process (fabricsim.run() calls it in a fresh
// worker process). Results cross as JSON text; tables stay in the results folder.
#include <atomic>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "fabricsim/core/config.h"
#include "fabricsim/nic/algo/qcn_fluid.h"
#include "fabricsim/platforms/headroom_report.h"
#include "fabricsim/platforms/platform.h"
#include "fabricsim/platforms/scenario_runner.h"

namespace py = pybind11;
using namespace fabricsim;

// libsystemc's own main() refers to sc_main; the module never calls it, but the symbol must
// resolve when Python loads libsystemc.so.
__attribute__((visibility("default"))) int sc_main(int, char*[]) {
    return 1;
}

namespace {

/// A Python str of `text`, bytes that are not UTF-8 replaced (a message may quote a key that
/// is not UTF-8; pybind11's py::str would throw).
py::str lenient_str(const std::string& text) {
    return py::reinterpret_steal<py::str>(
        PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
}

std::atomic<bool> g_elaborated{false};

using file_map = std::map<std::string, std::string>;

platforms::scenario_source make_source(const std::string& config, bool is_file,
                                       std::vector<std::string> overrides, std::string name,
                                       std::string base_dir, file_map files) {
    using origin = platforms::scenario_source::origin;
    return {is_file ? origin::FILE : origin::TEXT,
            config,
            std::move(overrides),
            std::move(name),
            std::move(base_dir),
            std::move(files)};
}

py::dict validate(const std::string& config, bool is_file, std::vector<std::string> overrides,
                  std::string name, std::string base_dir, file_map files) {
    const auto sc = platforms::prepare_scenario(make_source(config, is_file, std::move(overrides),
                                                            std::move(name), std::move(base_dir),
                                                            std::move(files)));
    // Text the user wrote may hold bytes that are not UTF-8 (the YAML reader passes them on):
    // replaced, as the CLI's terminal shows them.
    const auto replace = nlohmann::json::error_handler_t::replace;
    py::dict d;
    d["name"] = lenient_str(sc.name);
    d["seed"] = sc.seed;
    d["counts"] = lenient_str(platforms::describe_counts(sc));
    d["config_json"] =
        echo_json(platforms::scenario_schema(), sc.echo).dump(-1, ' ', false, replace);
    py::dict read;
    for (const auto& [path, content] : sc.files_read)
        read[lenient_str(path)] = lenient_str(content);
    d["files"] = read;
    return d;
}

std::string run(const std::string& config, bool is_file, std::vector<std::string> overrides,
                std::string name, const std::string& out_dir, bool run_ahead, std::string base_dir,
                file_map files, bool overwrite) {
    // Validate first (a bad key costs this process nothing), then claim the one elaboration.
    const auto sc = platforms::prepare_scenario(make_source(config, is_file, std::move(overrides),
                                                            std::move(name), std::move(base_dir),
                                                            std::move(files)));
    if (g_elaborated.exchange(true))
        throw std::runtime_error(
            "a SystemC simulation already ran in this process (one elaboration per process; "
            "use fabricsim.run(), which starts a fresh worker)");
    platforms::run_options opt;
    opt.run_ahead = run_ahead;
    opt.overwrite = overwrite;
    platforms::run_result r;
    {
        // SIGINT/SIGTERM during the run end it early with the summary so far ("complete": false).
        py::gil_scoped_release release;
        r = platforms::run_scenario(sc, out_dir, opt);
    }
    return r.summary.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

py::object explain(const std::string& key) {
    std::ostringstream os;
    if (!platforms::scenario_schema().explain(os, key)) return py::none();
    return py::str(os.str());
}

std::string format_summary(const std::string& summary_json) {
    std::ostringstream os;
    platforms::print_summary(nlohmann::json::parse(summary_json), os);
    return os.str();
}

// The kind of a parameter and the unit a plain number for it is in (Python converts numbers
// from grids and overrides with it); min and max are given in that unit.
struct kind_info {
    const char* kind;
    const char* unit;
    double scale;  ///< schema base unit per `unit` (times are ps in C++, seconds in Python)
};

kind_info describe_kind(value_kind k) {
    switch (k) {
        case value_kind::BOOL:
            return {"bool", "", 1};
        case value_kind::INT:
            return {"int", "", 1};
        case value_kind::REAL:
            return {"real", "", 1};
        case value_kind::STRING:
            return {"string", "", 1};
        case value_kind::CHOICE:
            return {"choice", "", 1};
        case value_kind::STRING_LIST:
            return {"string_list", "", 1};
        case value_kind::BIT_RATE:
            return {"bit_rate", "bps", 1};
        case value_kind::BYTES:
            return {"bytes", "B", 1};
        case value_kind::SIZE:
            return {"size", "B", 1};
        case value_kind::TIME:
            return {"time", "s", 1e12};
        case value_kind::FREQUENCY:
            return {"frequency", "Hz", 1};
        case value_kind::MAP_LIST:
            return {"map_list", "", 1};
    }
    return {"string", "", 1};
}

// The headroom calculator (headroom_report.h): options as text, the report as a dict.
py::dict headroom(const std::map<std::string, std::string>& options) {
    const nlohmann::json report = platforms::headroom_report(options);
    return py::module_::import("json").attr("loads")(report.dump());
}

std::string format_headroom(const std::map<std::string, std::string>& options) {
    std::ostringstream os;
    platforms::print_headroom(platforms::headroom_report(options), os);
    return os.str();
}

py::list headroom_options() {
    py::list out;
    for (const auto& o : platforms::headroom_options()) {
        py::dict d;
        d["name"] = o.name;
        d["kind"] = describe_kind(o.kind).kind;
        d["model_default"] = o.model_default;
        d["sonic_default"] = o.sonic_default;
        d["help"] = o.help;
        out.append(d);
    }
    return out;
}

py::list schema() {
    py::list out;
    for (const auto& [path, p] : platforms::scenario_schema().params()) {
        const kind_info k = describe_kind(p.kind);
        py::dict d;
        d["path"] = path;
        d["kind"] = k.kind;
        d["unit"] = k.unit;
        d["default"] = p.default_value;
        d["help"] = p.help;
        d["optional"] = p.optional;
        d["indices"] = p.indices;  // per-index key: a value, a list or {index: value}
        d["choices"] = p.choices;
        d["min"] = p.min / k.scale;
        d["max"] = p.max / k.scale;
        out.append(d);
    }
    return out;
}

// The QCN fluid model (qcn_fluid.h): rates in bit/s in, packets/s inside, times in seconds out.
py::dict qcn_fluid(double rate_bps, double flows, double r_ai_bps, double g_d, double w, double p_s,
                   double q_eq_packets, double packet_bytes) {
    nic::qcn_fluid_params p;
    p.c = nic::to_packets_per_s(rate_bps, packet_bytes);
    p.n = flows;
    p.r_ai = nic::to_packets_per_s(r_ai_bps, packet_bytes);
    p.g_d = g_d;
    p.w = w;
    p.p_s = p_s;
    p.q_eq = q_eq_packets;
    if (!(p.c > 0) || !(p.n > 0) || !(p.p_s > 0) || !(p.p_s < 1) || !(p.r_ai >= 0) ||
        !(p.g_d > 0) || !(p.w >= 0))
        throw py::value_error(
            "qcn_fluid: needs rate > 0, flows > 0, 0 < p_s < 1, r_ai >= 0, g_d > 0, w >= 0");
    const nic::qcn_fluid_result r = nic::qcn_fluid_analysis(p);
    py::dict d;
    d["tau_star"] = r.tau_star;
    d["tau_hat"] = r.tau_hat;
    d["omega_star"] = r.omega_star;
    d["omega_hat"] = r.omega_hat;
    d["q_star_packets"] = r.q_star;
    d["q_hat_packets"] = r.q_hat;
    d["rc_star_bps"] = r.rc_star * 8 * packet_bytes;
    d["rt_star_bps"] = r.rt_star * 8 * packet_bytes;
    d["eta"] = r.eta;
    d["zeta"] = r.zeta;
    d["thm53_holds"] = r.thm53_holds();
    return d;
}

}  // namespace

PYBIND11_MODULE(_fabricsim, m) {
    m.doc() =
        "FabricSim native module: scenario validation, schema and one simulation run per process";
    // ConfigError(ValueError) with `key` and `reason`; the type lives as long as the interpreter.
    static PyObject* config_error_type =
        PyErr_NewException("fabricsim._fabricsim.ConfigError", PyExc_ValueError, nullptr);
    m.attr("ConfigError") = py::handle(config_error_type);
    // pybind11's translator type takes the exception_ptr by value.
    // NOLINTNEXTLINE(performance-unnecessary-value-param)
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const config_error& e) {
            py::object err =
                py::reinterpret_borrow<py::object>(config_error_type)(lenient_str(e.what()));
            err.attr("key") = lenient_str(e.key());
            err.attr("reason") = lenient_str(e.reason());
            PyErr_SetObject(config_error_type, err.ptr());
        }
    });
    m.def("validate", &validate, py::arg("config"), py::arg("is_file"),
          py::arg("overrides") = std::vector<std::string>{}, py::arg("name") = "",
          py::arg("base_dir") = "", py::arg("files") = file_map{},
          "Reads, overrides and validates a scenario without elaborating; returns name, seed, "
          "counts, "
          "the configuration echo (JSON text) and files ({absolute path: content} of every file it "
          "read). "
          "Relative paths resolve against base_dir (default: the file's directory, or the current "
          "one for "
          "text); a path in `files` is read from there. Raises ConfigError naming the key.");
    m.def(
        "run", &run, py::arg("config"), py::arg("is_file"), py::arg("overrides"), py::arg("name"),
        py::arg("out_dir"), py::arg("run_ahead") = true, py::arg("base_dir") = "",
        py::arg("files") = file_map{}, py::arg("overwrite") = false,
        "Validates, elaborates and simulates one scenario, writes the results folder and returns "
        "summary.json as text. Once per process. base_dir and files as for validate(). A non-empty "
        "out_dir raises ConfigError unless "
        "overwrite (which clears a results folder). SIGINT/SIGTERM end the run early: the summary "
        "so far is returned with complete false and stop_reason. A failed write raises "
        "RuntimeError.");
    m.def("explain", &explain, py::arg("key") = "",
          "Schema text for parameters under `key`, or None.");
    m.def("format_summary", &format_summary, py::arg("summary_json"), "The CLI's summary table.");
    m.def("schema", &schema,
          "Every parameter: path, kind, unit (of plain numbers, min and max), default, help, "
          "range, choices.");
    m.def("headroom", &headroom, py::arg("options"),
          "PFC headroom from options given as text with units ({'rate': '100Gbps', "
          "'cable_length': '5'}): method, inputs, terms (wire bytes), cells, bytes (model) or "
          "xoff/xon/size (sonic). Raises ConfigError naming the option.");
    m.def("format_headroom", &format_headroom, py::arg("options"),
          "The headroom report as the CLI's table.");
    m.def("headroom_options", &headroom_options,
          "The headroom options: name, kind, model_default, sonic_default ('-': not an input), "
          "help.");
    m.def("qcn_fluid", &qcn_fluid, py::arg("rate_bps"), py::arg("flows"), py::arg("r_ai_bps"),
          py::arg("g_d"), py::arg("w"), py::arg("p_s"), py::arg("q_eq_packets"),
          py::arg("packet_bytes"),
          "The QCN fluid model (Alizadeh's thesis, seed-000 2.5): fixed point and delay margins "
          "tau_star (Thm 5.1, QCN) and tau_hat (Thm 5.2, QCN-AIMD) in seconds.");
    m.def(
        "has_run", [] { return g_elaborated.load(); },
        "Whether this process has elaborated a simulation.");
    m.attr("__version__") = "0.1.0";
}
