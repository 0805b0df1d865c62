/* version.h — placebench's version and git revision, recorded with every result. */
#ifndef PB_VERSION_H
#define PB_VERSION_H

/* "0.1.0 (git 1a2b3c4d5e6f)"; static storage. */
const char *pb_version_string(void);

#endif
