/* source-tpm.h - what the tpm source (source-tpm.c) shows beyond SourceOps:
 * how a TSS2 response code becomes an -errno, and which TPM a device path
 * names, so the daemon can tell that /dev/hwrng's "tpm-rng-N" (hwrng.h)
 * is the same TPM as the source's /dev/tpmrmN. Pure functions.
 * Flow: [source] -> health -> conditioner -> store. */
#pragma once

#include <stdint.h>

#include "source.h"

/* The resource manager's node: several users may share the TPM. */
#define SOURCE_TPM_PATH "/dev/tpmrm0"

/* A TSS2_RC, from any layer, as the source reports it:
 *   0            success
 *   -EAGAIN      busy, try later: a TPM warning (TPM_RC_RETRY, YIELDED,
 *                TESTING, CANCELED, out of memory for contexts...: the
 *                command was not executed and may succeed if sent again),
 *                or the TCTI's "no answer yet" (TSS2_TCTI_RC_TRY_AGAIN)
 *   -EIO         the TPM is unreachable or failed: TCTI I/O error, no
 *                connection, TPM_RC_FAILURE (failure mode), a TPM 1.2-style
 *                failure answer (QEMU's, once its TPM backend is gone)
 *   -ENXIO       TPM_RC_INITIALIZE: the TPM was never started up
 *   -EBADMSG     a malformed or short answer (SAPI, marshalling)
 *   -EPROTO      any other TPM error, or a misuse of the stack */
int source_tpm_errno(uint32_t rc);

/* N when path's last component is "tpmrmN" or "tpmN" (tpm_number_parse,
 * hwrng.h), else -EINVAL. /dev/tpmrmN, /dev/tpmN and the hwrng "tpm-rng-N" are one TPM. */
int source_tpm_device_index(const char *path);
