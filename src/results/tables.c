#include "results/tables.h"

const struct ml_report_table ml_table_comparison = {
    .title = "Comparison",
    .place = 10,
    .intro =
        "Headline figures of each path, from its first cell ({profile.matrix.0.cell}); hub bytes "
        "are the hub NIC's\ncounters (host side) over the passes that passed their per-second "
        "checks; hub CPU is the hub's busy\nseconds above idle per GB of payload in that same "
        "cell (CPU cost has the fixed rate's).\nIn parentheses: the 95 % interval on a log scale "
        "(Student's t of the passes' logarithms), where\nthe cell has 2 passes or more, none "
        "where a value is not positive or a percentile only a bound\n(\"t:\" marks an older "
        "run's interval of the mean).",
    .check_column = true,
    .rows = ML_ROWS_PATH,
};

const struct ml_report_table ml_table_cells = {
    .title = "Throughput by direction and streams",
    .place = 20,
    .intro = "iperf3, TCP, passes of {profile.pass_s} s; the medians and CVs are over the passes "
             "that passed; in\nparentheses, the 95 % interval on a log scale (Student's t of their "
             "logarithms; \"t:\" marks an\nolder run's interval of the mean).",
    .rows = ML_ROWS_CELL,
};

const struct ml_report_table ml_table_pairs = {
    .title = "Flows through the hub at once",
    .place = 25,
    .intro = "pairs-K: K single-stream TCP flows at once, each from one of the hub's clients to "
             "the next\naround the ring that starts with the measured pair; Mbit/s is all K "
             "flows together, the\nhub factor is the hub's NIC over all their payload, and hub "
             "CPU is its busy seconds over the\ntransfer's (the medians over the passes that "
             "passed). Its vCPU is saturated at 90 % or more. Frames dropped at its door are\n"
             "what the host dropped because the hub did not take them in from its tap's queue:\n"
             "the hub, or the host's cores that run it, were the bottleneck.",
    .rows = ML_ROWS_CELL,
    .only_with = "pairs",
};

const struct ml_report_table ml_table_latency = {
    .title = "Latency idle and under load",
    .place = 30,
    .target_column = true,
    .rows = ML_ROWS_PATH,
};

const struct ml_report_table ml_table_passes = {
    .title = "Passes",
    .place = 40,
    .rows = ML_ROWS_PASS,
};
