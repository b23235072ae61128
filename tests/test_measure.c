/* The arithmetic behind the reported figures. */
#include "check.h"

#include <math.h>

#include "measure/metrics.h"

int main(void)
{
    double odd[] = {739.0, 696.4, 722.1};
    CHECK(ml_median(odd, 3) == 722.1);  /* the seed's kernel WireGuard passes */
    double even[] = {4, 1, 3, 2};
    CHECK(ml_median(even, 4) == 2.5);
    double one[] = {42};
    CHECK(ml_median(one, 1) == 42);
    CHECK(isnan(ml_median(NULL, 0)));
    return check_finish();
}
