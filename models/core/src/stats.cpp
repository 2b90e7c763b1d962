#include "fabricsim/core/stats.h"

#include <nlohmann/json.hpp>

namespace fabricsim {

std::string_view drop_cause_name(drop_cause c) {
    switch (c) {
        case drop_cause::FCS_ERROR:
            return "fcs_error";
        case drop_cause::LINK_DOWN:
            return "link_down";
        case drop_cause::NO_ROUTE:
            return "no_route";
        case drop_cause::TTL_EXPIRED:
            return "ttl_expired";
        case drop_cause::SHARED_BUFFER_FULL:
            return "shared_buffer_full";
        case drop_cause::PORT_CAP:
            return "port_cap";
        case drop_cause::NIC_TX_QUEUE_FULL:
            return "nic_tx_queue_full";
        case drop_cause::INGRESS_PG_LIMIT:
            return "ingress_pg_limit";
        case drop_cause::INGRESS_POOL_FULL:
            return "ingress_pool_full";
        case drop_cause::HEADROOM_EXHAUSTED:
            return "headroom_exhausted";
        case drop_cause::EGRESS_QUEUE_LIMIT:
            return "egress_queue_limit";
        case drop_cause::EGRESS_POOL_FULL:
            return "egress_pool_full";
        case drop_cause::PFC_WATCHDOG:
            return "pfc_watchdog";
        case drop_cause::OUT_OF_SEQUENCE:
            return "out_of_sequence";
        case drop_cause::DUPLICATE:
            return "duplicate";
        case drop_cause::AQM_DROP:
            return "aqm_drop";
        case drop_cause::RX_RING_FULL:
            return "rx_ring_full";
        case drop_cause::PACER_FIFO_FULL:
            return "pacer_fifo_full";
        case drop_cause::CREDIT_DROPPED:
            return "credit_dropped";
        case drop_cause::PIPELINE_OVERFLOW:
            return "pipeline_overflow";
        case drop_cause::COUNT:
            break;
    }
    return "unknown";
}

std::uint64_t drop_counters::total() const {
    std::uint64_t t = 0;
    for (auto v : by_cause) t += v;
    return t;
}

drop_counters& drop_counters::operator+=(const drop_counters& o) {
    for (std::size_t i = 0; i < DROP_CAUSES; ++i) by_cause[i] += o.by_cause[i];
    return *this;
}

nlohmann::json drops_to_json(const drop_counters& d) {
    nlohmann::json j = nlohmann::json::object();
    for (std::size_t i = 0; i < DROP_CAUSES; ++i)
        j[std::string(drop_cause_name(static_cast<drop_cause>(i)))] = d.by_cause[i];
    return j;
}

}  // namespace fabricsim
