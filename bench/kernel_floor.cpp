// SystemC kernel floor: timed SC_METHOD activations per wall second with no model work.
// K methods each re-notify their own event with a timed delay, like K busy links.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include <systemc>

namespace {

std::uint64_t g_activations = 0;

struct ticker : sc_core::sc_module {
    sc_core::sc_event ev{"ev"};
    sc_core::sc_time period;
    explicit ticker(const sc_core::sc_module_name& n, const sc_core::sc_time& p)
        : sc_core::sc_module(n), period(p) {
        SC_HAS_PROCESS(ticker);
        SC_METHOD(tick);
        sensitive << ev;
    }
    void tick() {
        ++g_activations;
        ev.notify(period);
    }
};

}  // namespace

int sc_main(int argc, char* argv[]) {
    sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
    const int k = argc > 1 ? std::atoi(argv[1]) : 64;
    const double sim_ms = argc > 2 ? std::atof(argv[2]) : 20.0;
    std::vector<std::unique_ptr<ticker>> t;
    for (int i = 0; i < k; ++i)  // co-prime-ish periods around 1.23 us (a 1500 B frame at 10G)
        t.push_back(
            std::make_unique<ticker>(("t" + std::to_string(i)).c_str(),
                                     sc_core::sc_time(1'230'400 + 997 * i, sc_core::SC_PS)));
    const auto t0 = std::chrono::steady_clock::now();
    sc_core::sc_start(sc_core::sc_time(sim_ms, sc_core::SC_MS));
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "{\"methods\": %d, \"activations\": %llu, \"wall_s\": %.4f, \"activations_per_s\": %.0f}\n",
        k, (unsigned long long)g_activations, wall, double(g_activations) / wall);
    return 0;
}
