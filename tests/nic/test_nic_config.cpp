// The `nic:` keys of the PCIe/DMA model and LSO: what reaches nic_config, and the errors, each
// naming its key.
#include <catch2/catch.hpp>

#include <string>

#include "fabricsim/core/config.h"
#include "fabricsim/nic/nic_device.h"

using namespace fabricsim;
using namespace fabricsim::nic;

namespace {

struct loaded {
    nic_config c;
    std::string error;  ///< empty if it loaded
};

loaded load(const std::string& yaml) {
    config_schema schema;
    nic_config::params().describe(schema, "nic");
    loaded out;
    try {
        const auto root = load_yaml_string(yaml);
        schema.validate(root);
        out.c = nic_config::params().load(config_node(schema, root, "", "").child("nic"));
    } catch (const config_error& e) {
        out.error = e.what();
    }
    return out;
}

void names(const std::string& yaml, const std::string& key, const std::string& why) {
    const auto err = load(yaml).error;
    INFO(yaml << " -> " << err);
    CHECK(err.find(key) != std::string::npos);
    CHECK(err.find(why) != std::string::npos);
}

}  // namespace

TEST_CASE("nic config: the PCIe model, its overrides, DMA and LSO keys load", "[nic][config]") {
    const auto ideal = load("nic: {}\n");
    REQUIRE(ideal.error.empty());
    CHECK_FALSE(ideal.c.dma.enabled);
    CHECK_FALSE(ideal.c.lso_enabled);
    CHECK(ideal.c.idle_tx_latency(1514) == 500 * PS_PER_NS);  // ideal: the fixed latencies
    const auto g = load(
        "nic: {pcie: {model: gen4_x16, lanes: 8, read_latency: 700ns, max_read_request: 1KiB},"
        " dma: {rings: 8, tx_buffer: 256KiB, doorbell_latency: 0ns}, lso: {enabled: true, "
        "max_bytes: 32KiB}, tx_queue: 512}\n");
    REQUIRE(g.error.empty());
    CHECK(g.c.dma.enabled);
    CHECK(g.c.dma.pcie.generation == 4);
    CHECK(g.c.dma.pcie.lanes == 8);
    CHECK(g.c.dma.pcie.read_latency == 700 * PS_PER_NS);
    CHECK(g.c.dma.pcie.max_read_request == 1024);
    CHECK(g.c.dma.pcie.max_payload == pcie_config::gen4_x16().max_payload);
    CHECK(g.c.dma.tx.rings == 8);
    CHECK(g.c.dma.tx.tx_buffer == 256 * 1024);
    CHECK(g.c.dma.tx.doorbell_latency == 0);
    CHECK(g.c.lso_enabled);
    CHECK(g.c.lso.max_bytes == 32768);
    CHECK(g.c.tx_queue_frames == 512);
    // Idle latency: descriptor fetch + payload read + pipeline, from the PCIe model.
    pcie_link link(g.c.dma.pcie);
    const ps_t fetched = link.dma_read(0, 16);
    CHECK(g.c.idle_tx_latency(1514) == link.dma_read(fetched, 1514) + 50 * PS_PER_NS);
    CHECK(load("nic: {pcie: {model: gen3_x8}}\n").c.dma.pcie.lanes == 8);
    // A run's config echo (every key with a default, at its default) loads again.
    CHECK(load("nic: {pcie: {model: gen3_x8}, tx_latency: 500ns, rx_latency: 500ns, lso: "
               "{enabled: false}}\n")
              .error.empty());
}

TEST_CASE("nic config: PCIe, DMA and LSO errors name the key", "[nic][config]") {
    names("nic: {pcie: {model: gen9}}\n", "nic.pcie.model", "gen9");
    names("nic: {pcie: {lanes: 8}}\n", "nic.pcie.lanes", "applies only with a pcie.model");
    names("nic: {pcie: {model: gen3_x16, lanes: 3}}\n", "nic.pcie.lanes", "1, 2, 4, 8 or 16");
    names("nic: {pcie: {model: gen3_x16, max_payload: 300B}}\n", "nic.pcie.max_payload",
          "power of 2");
    names("nic: {pcie: {model: gen3_x16, max_outstanding_reads: 0}}\n",
          "nic.pcie.max_outstanding_reads", "1");
    names("nic: {dma: {rings: 2}}\n", "nic.dma.rings", "applies only with a pcie.model");
    names("nic: {pcie: {model: gen3_x16}, dma: {tx_buffer: 1KiB}}\n", "nic.dma.tx_buffer",
          "at least 2 KiB");
    names("nic: {lso: {enabled: true}}\n", "nic.lso.enabled", "needs a pcie.model");
    names("nic: {pcie: {model: gen3_x16}, lso: {max_bytes: 32KiB}}\n", "nic.lso.max_bytes",
          "applies only with lso.enabled");
    names("nic: {pcie: {model: gen3_x16}, lso: {enabled: true, max_bytes: 1MiB}}\n",
          "nic.lso.max_bytes", "above the maximum 256KiB");
    names("nic: {pcie: {model: gen3_x16}, tx_latency: 1us}\n", "nic.tx_latency",
          "does not apply with a pcie.model");
    names("nic: {pcie: {model: gen3_x16}, rx_latency: 1us}\n", "nic.rx_latency",
          "does not apply with a pcie.model");
    names("nic: {pcie: {model: gen3_x16}, tx_queue: 100000}\n", "nic.tx_queue", "65536");
}

TEST_CASE("nic config: the pacer preset with overrides and the receive path keys load",
          "[nic][config]") {
    const auto none = load("nic: {}\n");
    REQUIRE(none.error.empty());
    CHECK_FALSE(none.c.pacer.enabled());
    CHECK_FALSE(none.c.rx.napi);
    const auto p = load(
        "nic: {pacer: {mode: ns2, beta: 16, fifo: 64KiB, table_full: lru}, rx: {napi: true, "
        "coalescing: adaptive, rx_frames: 8, rx_usecs: 0s, gro: false, cores: 4, irq_cost: 2us, "
        "byte_cost: 1ns, budget: 16, ring: 512}}\n");
    REQUIRE(p.error.empty());
    const hull_pacer_params hp = p.c.pacer.params(10'000'000'000ull);
    CHECK(hp.update_period == 7'200 * PS_PER_NS);  // the ns2 preset
    CHECK(hp.beta == 16);                          // overridden
    CHECK(hp.fifo_bytes == 65536);
    CHECK(hp.table_full == bank_policy::LRU);
    CHECK(hp.line_rate_bps == 10'000'000'000ull);  // the NIC's rate, not the preset's
    CHECK_FALSE(hp.validate());
    CHECK(p.c.rx.napi);
    CHECK(p.c.rx.coalesce.adaptive);
    CHECK(p.c.rx.coalesce.rx_frames == 8);
    CHECK(p.c.rx.coalesce.rx_usecs == 0);
    CHECK_FALSE(p.c.rx.gro);
    CHECK(p.c.rx.cpu.cores == 4);
    CHECK(p.c.rx.cpu.irq_cost == 2 * PS_PER_US);
    CHECK(p.c.rx.cpu.poll_cost == rx_cpu_params{}.poll_cost);
    CHECK(p.c.rx.cpu.byte_cost == 1000);
    CHECK(p.c.rx.cpu.budget == 16);
    CHECK(p.c.rx.cpu.ring == 512);
    // The testbed preset is 1G hardware: at 10G a 16-us token is larger than its 3 KiB bucket.
    const auto t = load("nic: {pacer: {mode: testbed}}\n");
    REQUIRE(t.error.empty());
    CHECK(t.c.pacer.params(10'000'000'000ull).validate()->field == "depth_bytes");
    CHECK_FALSE(t.c.pacer.params(1'000'000'000ull).validate());
}

TEST_CASE("nic config: pacer and receive path errors name the key", "[nic][config]") {
    names("nic: {pacer: {beta: 3}}\n", "nic.pacer.beta", "applies only with a pacer.mode");
    names("nic: {pacer: {mode: fast}}\n", "nic.pacer.mode", "fast");
    names("nic: {pacer: {mode: ns2, eta: 0}}\n", "nic.pacer.eta", "");
    names("nic: {pacer: {mode: ns2, p_a: 1.5}}\n", "nic.pacer.p_a", "");
    names("nic: {rx: {rx_frames: 8}}\n", "nic.rx.rx_frames", "applies only with rx.napi");
    names("nic: {rx: {napi: true, cores: 0}}\n", "nic.rx.cores", "");
    names("nic: {rx: {napi: true, budget: 0}}\n", "nic.rx.budget", "");
    names("nic: {rx: {napi: true, coalescing: dynamic}}\n", "nic.rx.coalescing", "dynamic");
}
