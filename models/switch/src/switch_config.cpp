#include "fabricsim/switch/switch_config.h"

#include <cmath>

namespace fabricsim::sw {

ps_t switch_config::clock_period() const {
    return static_cast<ps_t>(std::llround(1e12 / core_clock_hz));
}

void switch_config::describe(config_schema& s, const std::string& p) {
    s.add(p + ".core_clock", value_kind::FREQUENCY, "1GHz",
          "Switch core clock; pipeline exit times are rounded up to its edges").min = 1e6;
    s.add(p + ".pipeline_latency", value_kind::TIME, "300ns",
          "Ingress-to-egress pipeline latency (parsing, lookup, MMU), excluding serialisation")
        .max = 1e9;  // 1 ms
    auto& m = s.add(p + ".mode", value_kind::CHOICE, "store_and_forward",
                    "store_and_forward: act on the last bit; cut_through: act after cut_through_bytes "
                    "when the egress is idle and not faster than the ingress");
    m.choices = {"store_and_forward", "cut_through"};
    auto& ct = s.add(p + ".cut_through_bytes", value_kind::BYTES, "64B",
                     "Bytes of a frame a cut-through switch needs before forwarding it");
    ct.min = 34;  // Ethernet + IPv4 header: the route lookup needs the destination address
    ct.max = 1518;
    s.add(p + ".buffer", value_kind::BYTES, "4MiB", "Shared packet buffer of the chip").min = 1;
    s.add(p + ".port_cap", value_kind::SIZE, "600KB",
          "Most bytes (or frames, with 'pkt') one egress port may hold; tail drop above").min = 1;
}

switch_config switch_config::load(const config_node& n) {
    switch_config c;
    c.core_clock_hz = n.frequency("core_clock");
    c.pipeline_latency = n.time("pipeline_latency");
    c.mode = n.str("mode") == "cut_through" ? forwarding_mode::CUT_THROUGH : forwarding_mode::STORE_AND_FORWARD;
    c.cut_through_bytes = static_cast<std::uint32_t>(n.bytes("cut_through_bytes"));
    c.buffer_bytes = n.bytes("buffer");
    c.port_cap = n.size("port_cap");
    if (!c.port_cap.packets && c.port_cap.value > c.buffer_bytes)
        n.fail("port_cap", "is larger than switch.buffer (" + format_bytes(c.buffer_bytes) + ")");
    if (!c.port_cap.packets && c.port_cap.value < 64)
        n.fail("port_cap", "must hold at least one minimum-size frame (64B)");
    return c;
}

}  // namespace fabricsim::sw
