/* A guest's VmRSS figures are untrusted: their sum never overflows and a negative one is not
 * added (the sum was a signed addition, undefined on overflow). */
#include "check.h"

#include <limits.h>

#include "measure/guestcpu.h"

int main(void)
{
    struct ml_guest_cpu c;
    CHECK(ml_guest_cpu_parse("cpu  1 0 1 100 0 0 0 0\n"
                             "R tailscaled VmRSS:\t 9223372036854775807 kB\n"
                             "R tailscaled VmRSS:\t 1000 kB\n"
                             "R nebula VmRSS:\t -5000 kB\n"
                             "R nebula VmRSS:\t 2000 kB\n",
                             &c));
    CHECK(c.daemon_rss_kib[ml_daemon_index("tailscaled")] == LLONG_MAX);
    CHECK(c.daemon_rss_kib[ml_daemon_index("nebula")] == 2000);
    return check_finish();
}
