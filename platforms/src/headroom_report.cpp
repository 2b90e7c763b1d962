#include "fabricsim/platforms/headroom_report.h"

#include <cstdio>
#include <limits>
#include <optional>
#include <ostream>
#include <utility>

#include "fabricsim/core/pause_reaction.h"
#include "fabricsim/core/units.h"
#include "fabricsim/phy/link_timing.h"
#include "fabricsim/switch/algo/headroom.h"

namespace fabricsim::platforms {

namespace {

constexpr const char* NOT_USED = "-";

const headroom_option* find_option(const std::string& name) {
    for (const headroom_option& o : headroom_options())
        if (name == o.name) return &o;
    return nullptr;
}

/// The options of one call, parsed on demand with the project's unit parsers.
class option_values
{
public:
    option_values(const std::map<std::string, std::string>& given, bool sonic)
        : m_given(given), m_sonic(sonic) {}

    /// The text of `name`: given, else the method's default; nullopt if neither.
    std::optional<std::string> text(const char* name) const {
        auto it = m_given.find(name);
        if (it != m_given.end()) return it->second;
        const headroom_option& o = *find_option(name);
        const char* d = m_sonic ? o.sonic_default : o.model_default;
        if (*d == '\0' || std::string(d) == NOT_USED) return std::nullopt;
        return std::string(d);
    }
    bool given(const char* name) const { return m_given.count(name) != 0; }

    std::optional<std::uint64_t> rate(const char* name) const {
        return parse(name,
                     [](const std::string& s, std::string& why) { return parse_bit_rate(s, why); });
    }
    std::optional<ps_t> time(const char* name) const {
        return parse(name,
                     [](const std::string& s, std::string& why) { return parse_time(s, why); });
    }
    std::optional<double> real(const char* name) const {
        return parse(name,
                     [](const std::string& s, std::string& why) { return parse_real(s, why); });
    }
    /// Metres: a number, optionally followed by "m" as SONiC writes cable lengths ("5m").
    std::optional<double> metres(const char* name) const {
        return parse(name, [](const std::string& s, std::string& why) {
            const bool suffix = !s.empty() && s.back() == 'm';
            auto v = parse_real(suffix ? s.substr(0, s.size() - 1) : s, why);
            if (!v) why = "'" + s + "' is not a length in metres (e.g. 5 or 5m)";
            return v;
        });
    }
    /// Bytes: a plain integer, or a size with a byte unit ("9216", "9216B", "9KiB").
    std::optional<std::uint32_t> bytes(const char* name) const {
        auto v = parse(name, [](const std::string& s, std::string& why) {
            std::string ignored;
            if (auto i = parse_integer(s, ignored)) {
                if (*i >= 0) return std::optional<std::uint64_t>(static_cast<std::uint64_t>(*i));
                why = "'" + s + "' is negative";
                return std::optional<std::uint64_t>();
            }
            return parse_bytes(s, why);
        });
        if (v && *v > std::numeric_limits<std::uint32_t>::max())
            throw config_error(name, "'" + *text(name) + "' is too large");
        return v ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(*v)) : std::nullopt;
    }

private:
    template <class F>
    auto parse(const char* name, F f) const
        -> decltype(f(std::string(), std::declval<std::string&>())) {
        const auto t = text(name);
        if (!t) return std::nullopt;
        std::string why;
        auto v = f(*t, why);
        if (!v) throw config_error(name, why);
        return v;
    }

    const std::map<std::string, std::string>& m_given;
    bool m_sonic;
};

template <class T>
T required(const std::optional<T>& v, const char* name, const char* why) {
    if (!v) throw config_error(name, why);
    return *v;
}

/// headroom_error's field as the option that set it.
[[noreturn]] void rethrow_as_option(const sw::headroom_error& e, bool sonic, bool cable) {
    static const std::map<std::string, std::string> model_names{
        {"rate_bps", "rate"},
        {"one_way_latency", "one_way_latency"},
        {"max_frame_bytes", "mtu"},
        {"lossless_frame_bytes", "lossless_mtu"},
        {"response_delay", "response_delay"},
        {"cell_bytes", "cell"},
        {"cell_overhead_bytes", "cell_overhead"},
        {"small_packet_percent", "small_packets"},
        {"local_commit_ahead", "local_commit_ahead"},
        {"peer_commit_ahead", "peer_commit_ahead"}};
    static const std::map<std::string, std::string> sonic_names{
        {"rate_bps", "rate"},
        {"cable_length_m", "cable_length"},
        {"port_mtu", "mtu"},
        {"lossless_mtu", "lossless_mtu"},
        {"cell_bytes", "cell"},
        {"small_packet_percent", "small_packets"},
        {"gearbox_delay_ns", "gearbox_delay"}};
    const auto& names = sonic ? sonic_names : model_names;
    auto it = names.find(e.field());
    std::string option = it == names.end() ? e.field() : it->second;
    if (option == "one_way_latency" && cable) option = "cable_length";
    throw config_error(option, e.reason());
}

/// A time for people: ns below 1 us, else us, without trailing zeros.
std::string time_text(ps_t t) {
    char buf[64];
    if (t < PS_PER_US)
        std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(t) / PS_PER_NS);
    else
        std::snprintf(buf, sizeof buf, "%.6f", static_cast<double>(t) / PS_PER_US);
    std::string s = buf;
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s + (t < PS_PER_US ? "ns" : "us");
}

std::string real_text(double v, const char* format) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

nlohmann::json model_report(const option_values& o) {
    sw::headroom_inputs in;
    in.rate_bps = required(o.rate("rate"), "rate", "is required (e.g. 100Gbps)");
    nlohmann::json inputs;
    const bool cable = !o.given("one_way_latency");
    if (cable) {
        // The scenario loader's link: 5 ns/m + the rate's default PCS and FEC latencies.
        const double m = required(o.metres("cable_length"), "cable_length",
                                  "is required unless one_way_latency is given");
        if (m < 0 || m > 1e6) throw config_error("cable_length", "must be 0..1e6 metres");
        const phy::fec_mode fec = phy::default_fec(in.rate_bps);
        const ps_t prop = phy::cable_propagation(m);
        const ps_t enc = phy::default_encoding_latency(in.rate_bps);
        const ps_t fec_lat = phy::default_fec_latency(fec, in.rate_bps);
        in.one_way_latency = prop + enc + fec_lat;
        inputs["cable_length_m"] = m;
        inputs["propagation_ps"] = prop;
        inputs["encoding_latency_ps"] = enc;
        inputs["fec"] = phy::fec_name(fec);
        inputs["fec_latency_ps"] = fec_lat;
    } else {
        if (o.given("cable_length"))
            throw config_error("cable_length", "give cable_length or one_way_latency, not both");
        in.one_way_latency = *o.time("one_way_latency");
    }
    in.max_frame_bytes = *o.bytes("mtu");
    in.lossless_frame_bytes = *o.bytes("lossless_mtu");
    in.response_delay = o.time("response_delay");
    in.cell_bytes = *o.bytes("cell");
    in.cell_overhead_bytes = *o.bytes("cell_overhead");
    in.small_packet_percent = *o.real("small_packets");
    in.local_commit_ahead = *o.time("local_commit_ahead");
    in.peer_commit_ahead = *o.time("peer_commit_ahead");
    const std::string crossing = *o.text("crossing_frame");
    if (crossing != "fits" && crossing != "in_headroom")
        throw config_error("crossing_frame", "'" + crossing + "' is not one of fits, in_headroom");
    in.crossing_frame_in_headroom = crossing == "in_headroom";
    sw::headroom_result r;
    try {
        r = sw::headroom_needed(in);
    } catch (const sw::headroom_error& e) {
        rethrow_as_option(e, false, cable);
    }
    inputs["one_way_latency_ps"] = in.one_way_latency;
    inputs["max_frame_bytes"] = in.max_frame_bytes;
    inputs["lossless_frame_bytes"] = in.lossless_frame_bytes;
    inputs["response_delay_ps"] = r.response_delay;
    inputs["response_delay_source"] = in.response_delay ? "given" : "annex31b";
    if (!in.response_delay) inputs["response_quanta"] = annex31b_response_quanta(in.rate_bps);
    inputs["cell_bytes"] = in.cell_bytes;
    inputs["cell_overhead_bytes"] = in.cell_overhead_bytes;
    inputs["small_packet_percent"] = in.small_packet_percent;
    inputs["local_commit_ahead_ps"] = in.local_commit_ahead;
    inputs["peer_commit_ahead_ps"] = in.peer_commit_ahead;
    inputs["crossing_frame"] = crossing;

    nlohmann::json j;
    j["method"] = "model";
    j["rate_bps"] = in.rate_bps;
    j["inputs"] = inputs;
    nlohmann::json terms = nlohmann::json::object();
    nlohmann::json order = nlohmann::json::array();
    for (const sw::headroom_term& t : sw::headroom_terms(r)) {
        terms[t.key] = t.bytes;
        order.push_back({{"key", t.key}, {"name", t.name}, {"meaning", t.meaning}});
    }
    j["terms"] = terms;
    j["term_order"] = order;
    j["wire_bytes"] = r.wire_bytes;
    j["lossless_frames"] = r.lossless_frames;
    j["small_frames"] = r.small_frames;
    j["cells_per_frame"] = r.cells_per_frame;
    j["cells_per_small_frame"] = r.cells_per_small_frame;
    j["cells"] = r.cells;
    j["bytes"] = r.bytes;
    return j;
}

nlohmann::json sonic_report(const option_values& o) {
    for (const headroom_option& opt : headroom_options())
        if (std::string(opt.sonic_default) == NOT_USED && o.given(opt.name))
            throw config_error(opt.name, "is not an input of method sonic");
    sw::sonic_headroom_inputs in;
    in.rate_bps = required(o.rate("rate"), "rate", "is required (e.g. 100Gbps)");
    in.cable_length_m = required(o.metres("cable_length"), "cable_length", "is required");
    in.port_mtu = *o.bytes("mtu");
    in.lossless_mtu = *o.bytes("lossless_mtu");
    in.cell_bytes = *o.bytes("cell");
    in.small_packet_percent = *o.real("small_packets");
    in.gearbox_delay_ns = static_cast<double>(*o.time("gearbox_delay")) / PS_PER_NS;
    sw::sonic_headroom_result r;
    try {
        r = sw::sonic_headroom(in);
    } catch (const sw::headroom_error& e) {
        rethrow_as_option(e, true, true);
    }
    nlohmann::json j;
    j["method"] = "sonic";
    j["rate_bps"] = in.rate_bps;
    j["inputs"] = {{"cable_length_m", in.cable_length_m},
                   {"port_mtu", in.port_mtu},
                   {"lossless_mtu", in.lossless_mtu},
                   {"cell_bytes", in.cell_bytes},
                   {"small_packet_percent", in.small_packet_percent},
                   {"gearbox_delay_ns", in.gearbox_delay_ns},
                   {"mac_phy_delay_bytes", in.mac_phy_delay_bytes},
                   {"pipeline_latency_bytes", in.pipeline_latency_bytes}};
    j["terms"] = {{"port_mtu", in.port_mtu},
                  {"bytes_on_cable", r.bytes_on_cable},
                  {"bytes_on_gearbox", 2 * r.bytes_on_gearbox},
                  {"mac_phy_delay", in.mac_phy_delay_bytes},
                  {"peer_response", r.peer_response}};
    j["pause_quanta"] = r.pause_quanta;
    j["propagation"] = r.propagation;
    j["worst_case_factor"] = r.worst_case_factor;
    j["cell_occupancy"] = r.cell_occupancy;
    j["xoff"] = r.xoff;
    j["xon"] = r.xon;
    j["size"] = r.size;
    return j;
}

void print_model(const nlohmann::json& j, std::ostream& os) {
    const auto& in = j["inputs"];
    const auto rate = j["rate_bps"].get<std::uint64_t>();
    os << "PFC headroom, model method (worst case of FabricSim's PFC physics)\n";
    os << "  rate " << format_rate(rate) << ", largest frame " << in["max_frame_bytes"]
       << " B, lossless frames " << in["lossless_frame_bytes"] << " B, cells " << in["cell_bytes"]
       << " B";
    if (in["cell_overhead_bytes"].get<std::uint64_t>())
        os << " (+" << in["cell_overhead_bytes"] << " B per frame)";
    os << ", small packets " << real_text(in["small_packet_percent"].get<double>(), "%g") << " %\n";
    os << "  one-way latency " << time_text(in["one_way_latency_ps"].get<ps_t>());
    if (in.contains("cable_length_m"))
        os << " = cable " << real_text(in["cable_length_m"].get<double>(), "%g") << " m "
           << time_text(in["propagation_ps"].get<ps_t>()) << " + encoding "
           << time_text(in["encoding_latency_ps"].get<ps_t>()) << " + FEC "
           << in["fec"].get<std::string>() << " " << time_text(in["fec_latency_ps"].get<ps_t>());
    os << "\n  response delay " << time_text(in["response_delay_ps"].get<ps_t>());
    if (in.contains("response_quanta"))
        os << " (802.3 Annex 31B: " << in["response_quanta"] << " quanta)";
    os << "\n\n";
    char line[200];
    std::snprintf(line, sizeof line, "  %-20s %11s  %s\n", "term", "wire bytes", "meaning");
    os << line;
    for (const auto& t : j["term_order"]) {
        std::snprintf(line, sizeof line, "  %-20s %11llu  %s\n",
                      t["name"].get<std::string>().c_str(),
                      static_cast<unsigned long long>(
                          j["terms"][t["key"].get<std::string>()].get<std::uint64_t>()),
                      t["meaning"].get<std::string>().c_str());
        os << line;
    }
    std::snprintf(line, sizeof line, "  %-20s %11llu\n", "total",
                  static_cast<unsigned long long>(j["wire_bytes"].get<std::uint64_t>()));
    os << line << "\n";
    os << "  frames: " << j["lossless_frames"] << " x " << in["lossless_frame_bytes"] << " B ("
       << j["cells_per_frame"] << " cells each)";
    if (j["small_frames"].get<std::uint64_t>())
        os << " + " << j["small_frames"] << " x 64 B (" << j["cells_per_small_frame"]
           << " cells each)";
    os << "\n  headroom (XOFF_TH): " << j["cells"] << " cells = " << j["bytes"] << " B\n";
}

void print_sonic(const nlohmann::json& j, std::ostream& os) {
    const auto& in = j["inputs"];
    const auto& t = j["terms"];
    os << "PFC headroom, SONiC/Mellanox method (buffer_headroom_mellanox.lua)\n";
    os << "  rate " << format_rate(j["rate_bps"].get<std::uint64_t>()) << ", cable "
       << real_text(in["cable_length_m"].get<double>(), "%g") << " m, port mtu " << in["port_mtu"]
       << ", lossless mtu " << in["lossless_mtu"] << ", cell " << in["cell_bytes"]
       << " B, small packets " << real_text(in["small_packet_percent"].get<double>(), "%g")
       << " %\n\n";
    char line[200];
    auto row = [&](const char* name, double v, const char* meaning) {
        std::snprintf(line, sizeof line, "  %-18s %11.1f  %s\n", name, v, meaning);
        os << line;
    };
    std::snprintf(line, sizeof line, "  %-18s %11s  %s\n", "term", "bytes", "meaning");
    os << line;
    row("port_mtu", t["port_mtu"].get<double>(), "frame in progress on the reverse direction");
    row("bytes_on_cable", t["bytes_on_cable"].get<double>(),
        "round trip at 1.98e8 m/s, x 1000/1024");
    row("bytes_on_gearbox", t["bytes_on_gearbox"].get<double>(), "2 x gearbox delay");
    row("mac_phy_delay", t["mac_phy_delay"].get<double>(), "ASIC constant 0.8 KiB");
    const auto q = j["pause_quanta"].get<std::uint32_t>();
    const std::string resp =
        q ? "Mellanox quanta table: " + std::to_string(q) + " quanta" : "fallback 3.8 KiB";
    row("peer_response", t["peer_response"].get<double>(), resp.c_str());
    row("propagation", j["propagation"].get<double>(), "sum");
    os << "  cell occupancy " << real_text(j["cell_occupancy"].get<double>(), "%.6g")
       << " (worst-case factor " << real_text(j["worst_case_factor"].get<double>(), "%.6g")
       << ")\n\n";
    os << "  xoff = ceil1K(lossless_mtu + propagation x occupancy) = " << j["xoff"] << " B\n";
    os << "  xon  = ceil1K(pipeline latency)                        = " << j["xon"] << " B\n";
    os << "  size = xoff + xon                                      = " << j["size"] << " B\n";
}

}  // namespace

const std::vector<headroom_option>& headroom_options() {
    static const std::vector<headroom_option> options{
        {"method", value_kind::CHOICE, "model", "sonic",
         "model (worst case of FabricSim's physics) or sonic (the Mellanox/SONiC formula)"},
        {"rate", value_kind::BIT_RATE, "", "", "port speed (e.g. 100Gbps); required"},
        {"cable_length", value_kind::REAL, "", "",
         "cable in metres; model: one-way latency = 5 ns/m + the rate's PCS and FEC latency"},
        {"one_way_latency", value_kind::TIME, "", NOT_USED,
         "model: cable + PHY latency one way, instead of cable_length"},
        {"mtu", value_kind::BYTES, "9216", "9100",
         "model: largest frame of any class toward the peer (with FCS); sonic: port mtu"},
        {"lossless_mtu", value_kind::BYTES, "1518", "1024", "largest lossless frame"},
        {"cell", value_kind::BYTES, "208", "96", "MMU cell size"},
        {"cell_overhead", value_kind::BYTES, "0", NOT_USED,
         "model: bytes stored with each frame (ceil((frame + overhead) / cell) cells)"},
        {"response_delay", value_kind::TIME, "", NOT_USED,
         "model: peer reaction after the XOFF's last bit (default 802.3 Annex 31B)"},
        {"small_packets", value_kind::REAL, "0", "100",
         "percent of arriving bytes in 64-B frames (SONiC small_packet_percentage)"},
        {"local_commit_ahead", value_kind::TIME, "0ns", NOT_USED,
         "model: how far ahead our idle egress commits a frame (a switch: pipeline_latency "
         "+ one clock)"},
        {"peer_commit_ahead", value_kind::TIME, "0ns", NOT_USED,
         "model: the same for the peer (a switch peer; 0 for a NIC)"},
        {"crossing_frame", value_kind::CHOICE, "fits", NOT_USED,
         "model: in_headroom adds the frame whose admission sent the XOFF (FabricSim's MMU puts "
         "it in headroom unless the threshold is a whole number of frames; a scenario's "
         "`headroom: calculated` counts it)"},
        {"gearbox_delay", value_kind::TIME, NOT_USED, "0ns", "sonic: gearbox delay per side"},
    };
    return options;
}

nlohmann::json headroom_report(const std::map<std::string, std::string>& options) {
    for (const auto& [name, value] : options)
        if (!find_option(name)) throw config_error(name, "unknown option");
    auto m = options.find("method");
    const std::string method = m == options.end() ? "model" : m->second;
    if (method != "model" && method != "sonic")
        throw config_error("method", "'" + method + "' is not one of model, sonic");
    const bool sonic = method == "sonic";
    const option_values values(options, sonic);
    if (!sonic)
        for (const headroom_option& opt : headroom_options())
            if (std::string(opt.model_default) == NOT_USED && values.given(opt.name))
                throw config_error(opt.name, "is not an input of method model");
    return sonic ? sonic_report(values) : model_report(values);
}

void print_headroom(const nlohmann::json& report, std::ostream& os) {
    if (report["method"] == "sonic")
        print_sonic(report, os);
    else
        print_model(report, os);
}

}  // namespace fabricsim::platforms
