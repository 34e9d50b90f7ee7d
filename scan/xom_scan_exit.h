/*
 * xom_scan_exit.h - what a scanner result means as the exit status of a
 * tool that scans (xom-scan, xom-plan): the scanner's return codes
 * (xom_scan.h) in the tools' exit codes (common/xom_exit.h).  Kept out of
 * both, so that the tools' codes know nothing of the scanner, and the
 * scanner's interface nothing of the tools.
 */
#ifndef XOM_SCAN_EXIT_H
#define XOM_SCAN_EXIT_H

#include "../common/xom_exit.h"
#include "xom_scan.h"

/* The exit status that a return code of xom_scan_file() stands for. */
static inline int xom_exit_of_scan(int rc)
{
	switch (rc) {
	case XOM_SCAN_OK:
		return XOM_EXIT_OK;
	case XOM_SCAN_EUNSUPPORTED:
	case XOM_SCAN_EMALFORMED:
		return XOM_EXIT_FAILED;
	case XOM_SCAN_EIO:
	case XOM_SCAN_ENOMEM:
	case XOM_SCAN_EDISASM:
	default:
		return XOM_EXIT_ENV;
	}
}

#endif
