/*
 * status_system.h - xom status --system (cmd/status_system.c), which
 * xom status (status.c) hands that option to.  Internal to cmd/.
 */
#ifndef XOM_CMD_STATUS_SYSTEM_H
#define XOM_CMD_STATUS_SYSTEM_H

/* xom status --system [--json]: every process. */
int status_system(int json);

#endif
