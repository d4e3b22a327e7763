package merge

import "github.com/hindsight-memory/hindsight/internal/memtest"

var t0 = memtest.T0

const tenant = memtest.Tenant
