#pragma once
// A PCIe link whose TLP times are easy by hand, for the DMA tests.
#include "fabricsim/nic/algo/pcie_link.h"

namespace fabricsim::test {

/// Gen2 x8 without DLLP overhead: 5 GT/s x 8 x 8/10 = 32 Gb/s, exactly 250 ps a byte (MRd 24 B
/// = 6 ns, CplD 20 B + data); MPS 128, MRRS 256, 100 ns read and 50 ns write latency.
inline nic::pcie_config simple_pcie() {
    nic::pcie_config c;
    c.generation = 2;
    c.lanes = 8;
    c.max_payload = 128;
    c.max_read_request = 256;
    c.link_overhead_ppm = 0;
    c.read_latency = 100 * PS_PER_NS;
    c.write_latency = 50 * PS_PER_NS;
    return c;
}

}  // namespace fabricsim::test
