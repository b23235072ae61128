/* What the seed measured by hand (shared/seeds: Tailscale 1.104.4 and Headscale 0.29.7, kernel
 * WireGuard, one-vCPU guests under KVM, 10 s iperf3 transfers): its own numbers, named as such
 * wherever the report sets a run's figures beside them. Internal to report/. */
#pragma once

#define SEED_DIRECT_PAYLOAD 1033240576.0 /* bytes of the 10 s direct transfer */
#define SEED_DIRECT_HUB 132.0            /* one 66-byte packet each way on the hub */
#define SEED_RELAY_PAYLOAD 170655744.0   /* through Headscale's DERP */
#define SEED_RELAY_HUB (211231726.0 + 205567209.0)
#define SEED_WG_PAYLOAD 1080164352.0 /* kernel WireGuard, the hub the only peer */
#define SEED_WG_HUB (1188825276.0 + 1188470260.0)
#define SEED_JOIN_S 28.4
#define SEED_HEADSCALE_KIB "51,676"
#define SEED_TAILSCALED_KIB "43,336 and 42,624"
#define SEED_MTU 1280
#define SEED_DIRECT_MBIT 626.2 /* the median of three 10 s passes */
#define SEED_RELAY_MBIT 108.8
