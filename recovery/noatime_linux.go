package recovery

import "syscall"

// oNoAtime opens a file without updating its access time (Linux only: the file must be
// this user's, or the process root; otherwise open fails with EPERM).
const oNoAtime = syscall.O_NOATIME
