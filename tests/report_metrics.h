/* A metrics table in the form of results.json v2 (docs/results.md), for the report tests: the
 * report's own tables are tested against it, independently of what measure/'s table shows. */
#pragma once

#include "results/metric.h"
#include "results/tables.h"

#define V2(key, u, ...)                                                                            \
    {                                                                                              \
        .name = key, .unit = u, .shown_in = { __VA_ARGS__ }
static const struct ml_metric
    v2_metrics[] = {V2("median_bits_per_second", "bit/s", &ml_table_comparison),
                    .header = "Median Mbit/s", .scale = 1e-6, .significant = 3},
    V2("cv_bits_per_second_percent", "%", &ml_table_comparison), .header = "CV %", .decimals = 1
}
, V2("hub_bytes_per_payload_byte", "byte/byte", &ml_table_comparison),
    .header = "Hub bytes per payload byte", .significant = 3
}
, V2("rtt_idle_p99_ms", "ms", &ml_table_comparison),
    .header = "RTT p99 idle / loaded ms", .significant = 3, .at_least = "rtt_idle_p99_at_least",
    .lost = "idle.rtt.loss_percent", .lost_over = 1
}
, V2("rtt_loaded_p99_ms", "ms", &ml_table_comparison),
    .header = "RTT p99 idle / loaded ms", .significant = 3, .at_least = "rtt_loaded_p99_at_least",
    .lost = "rtt_loaded_loss_percent", .lost_over = 1
}
, V2("hub_cpu_s_per_gb", "s/GB", &ml_table_comparison), .header = "Hub CPU s/GB", .significant = 3
}
, V2("cells.*.passes_ok", "pass", &ml_table_cells), .header = "Passes ok / failed"
}
, V2("cells.*.passes_failed", "pass", &ml_table_cells), .header = "Passes ok / failed"
}
, V2("cells.*.median_bits_per_second", "bit/s", &ml_table_cells), .header = "Median Mbit/s",
                                                                  .scale = 1e-6, .significant = 3
}
, V2("cells.*.cv_bits_per_second_percent", "%", &ml_table_cells), .header = "CV %", .decimals = 1
}
, V2("cells.*.median_hub_bytes_per_payload_byte", "byte/byte", &ml_table_cells),
    .header = "Hub bytes per payload byte", .significant = 3
}
, V2("cells.*.rtt_loaded_p50_ms", "ms", &ml_table_cells), .header = "RTT loaded p50 / p99 ms",
                                                          .significant = 3
}
, V2("cells.*.rtt_loaded_p99_ms", "ms", &ml_table_cells),
    .header = "RTT loaded p50 / p99 ms", .significant = 3,
    .at_least = "cells.*.rtt_loaded_p99_at_least", .lost = "cells.*.rtt_loaded_loss_percent",
    .lost_over = 1
}
, V2("cells.*.rtt_loaded_loss_percent", "%", &ml_table_cells), .header = "Loaded loss %",
                                                               .decimals = 1
}
, V2("cells.*.passes_below_offered_rate", "pass", &ml_table_cells),
    .header = "Passes under 95 % of the offered rate"
}
, V2("idle.rtt.p50_ms", "ms", &ml_table_latency), .header = "RTT idle p50 / p90 / p99 / max ms",
                                                  .significant = 3
}
, V2("idle.rtt.p90_ms", "ms", &ml_table_latency), .header = "RTT idle p50 / p90 / p99 / max ms",
                                                  .significant = 3
}
, V2("idle.rtt.p99_ms", "ms", &ml_table_latency),
    .header = "RTT idle p50 / p90 / p99 / max ms", .significant = 3,
    .at_least = "idle.rtt.p99_at_least", .lost = "idle.rtt.loss_percent", .lost_over = 1
}
, V2("idle.rtt.max_ms", "ms", &ml_table_latency), .header = "RTT idle p50 / p90 / p99 / max ms",
                                                  .significant = 3
}
, V2("idle.rtt.loss_percent", "%", &ml_table_latency), .header = "Idle loss %", .decimals = 1
}
, V2("rtt_loaded_p99_ms", "ms", &ml_table_latency),
    .header = "RTT loaded p99 ms", .significant = 3, .at_least = "rtt_loaded_p99_at_least",
    .lost = "rtt_loaded_loss_percent", .lost_over = 1
}
, V2("rtt_loaded_loss_percent", "%", &ml_table_latency), .header = "Loaded loss %", .decimals = 1
}
, V2("passes.seq", "", &ml_table_passes), .header = "Seq"
}
, V2("passes.bits_per_second", "bit/s", &ml_table_passes), .header = "Mbit/s", .scale = 1e-6,
                                                           .significant = 3
}
, V2("passes.payload_bytes", "byte", &ml_table_passes), .header = "Payload bytes"
}
, V2("passes.hub_bytes_per_payload_byte", "byte/byte", &ml_table_passes),
    .header = "Hub bytes per payload byte", .significant = 3
}
, V2("passes.retransmits", "packet", &ml_table_passes), .header = "Retransmits"
}
, V2("passes.rtt_loaded.p99_ms", "ms", &ml_table_passes),
    .header = "RTT loaded p99 ms", .significant = 3, .at_least = "passes.rtt_loaded.p99_at_least",
    .lost = "passes.rtt_loaded.loss_percent", .lost_over = 1
}
, V2("passes.rtt_loaded.loss_percent", "%", &ml_table_passes), .header = "Loaded loss %",
                                                               .decimals = 1
}
, V2("passes.carried_percent_of_offered", "%", &ml_table_passes), .header = "% of the offered rate",
                                                                  .decimals = 1
}
,
}
;
#undef V2
