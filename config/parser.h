/* parser.h - what the files of config/ share while a file is read: the
 * keys (keys.c: the fixed ones, and those the device and source rows make),
 * the parse state with its first error, the line reader (reader.c), the
 * values (values.c) and the checks that span keys (checks.c). Nothing
 * outside config/ includes it. The files use one another downwards only:
 * config.c -> checks.c, reader.c -> keys.c -> values.c -> parser.c, devices.c.
 * Flow: config_load -> reader -> libinih -> [keys -> values] -> checks. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sodium.h>
#include <stdio.h>

#include "config.h"

/* The waiting reads of a device are shared out so that eight uids at their
 * quota and root's reserve (one quota more) fit in max_parked: however many
 * readers one uid starts, every other uid can park as long as fewer than
 * eight hold their full quota, and root always can (issue 12). So the
 * default max_parked_per_uid is max_parked / 9, and a value set by hand is
 * held to it too. */
#define PARKED_SHARES 9U

typedef enum KeyType {
        KEY_NAME,        /* char *: a CUSE device name */
        KEY_NAME_NONE,   /* char *: a CUSE device name, or empty/"none" for NULL */
        KEY_GROUP,       /* char *: group name or number, resolved by the daemon */
        KEY_USER,        /* char *: user name or number, resolved by the daemon */
        KEY_MODE,        /* mode_t, octal */
        KEY_BOOL,        /* bool */
        KEY_UNSIGNED,    /* unsigned in [min, max] */
        KEY_U64,         /* uint64_t in [min, max] */
        KEY_KIB,         /* size_t bytes, written in KiB in [min, max] */
        KEY_SOURCES,     /* unsigned in [min, the number of sources ever credited] */
        KEY_MSEC,        /* usec_t, written in whole milliseconds in [min, max] */
        KEY_SEC,         /* usec_t, written in whole seconds in [min, max] */
        KEY_SECONDS,     /* usec_t, written in seconds with up to 3 decimals; min, max in ms */
        KEY_CREDIT,      /* uint32_t millibits */
        KEY_CREDIT_AUTO, /* a SourceConfig's credit: millibits, or auto */
        KEY_PATH,        /* char * (or const char *): absolute path */
        KEY_PATH_NONE,   /* char * (or const char *): absolute path, or "none" for NULL */
        KEY_SOCKET,      /* char *: absolute path that fits sockaddr_un */
        KEY_SOCKET_NONE, /* char *: the same, or "none" for NULL */
        KEY_CHOICE,      /* unsigned: the index of the value in choices */
} KeyType;

typedef struct Key {
        const char *name;
        KeyType type;
        /* Of its field in Config; with devices, in each DeviceConfig whose
         * bit is set (a key rows share, as random_mode). */
        size_t offset;
        uint64_t min, max;
        unsigned devices;
        const char *const *choices; /* KEY_CHOICE: the words, NULL-terminated */
} Key;

/* Every key has an index below KEYS_MAX, for the line the file set it on:
 * the fixed keys', then the devices' (each row's name and mode key, and
 * dropin), then each source's (enable, credit, credit_cap, its own). */
#define KEYS_FIXED_MAX 32
#define KEYS_DEVICE_MAX (2 * _CONFIG_DEVICE_MAX + 1)
#define KEYS_SOURCE_MAX (3 + SOURCE_KEYS_MAX)
#define KEYS_MAX (KEYS_FIXED_MAX + KEYS_DEVICE_MAX + _CONFIG_SOURCE_MAX * KEYS_SOURCE_MAX)

/* A place in the files: the file's index in Config.files (plus one) in the
 * high 32 bits, its line in the low ones (0: the file as a whole). A place
 * in a later file, or later in the same file, compares greater; 0 is
 * nowhere (no file set the key). */
typedef uint64_t ParserAt;

static inline ParserAt parser_at(unsigned file, unsigned line) {
        return (ParserAt) (file + 1) << 32 | line;
}
static inline unsigned parser_at_line(ParserAt at) {
        return (unsigned) at;
}

typedef struct Parser {
        Config *config;         /* its files[] name the files of the parse */
        unsigned file;          /* the one being read */
        FILE *f;
        char *line;             /* getline()'s buffer */
        size_t line_size;
        unsigned lineno;
        crypto_hash_sha256_state digest; /* of the files' bytes as read (Config.sha256) */
        ParserAt key_at[KEYS_MAX]; /* where the files set each key; the last wins */
        /* the first error; error == 0 while there is none */
        int error;
        ParserAt error_at;
        char reason[256];
} Parser;

/* parser.c */
/* Records the first error, at line (0: the file as a whole) of the file
 * being read; later ones are dropped. */
__attribute__((format(printf, 4, 5)))
void parser_fail(Parser *p, int error, unsigned line, const char *fmt, ...);
/* The same at a place in any of the files (the checks that span keys). */
__attribute__((format(printf, 4, 5)))
void parser_fail_at(Parser *p, int error, ParserAt at, const char *fmt, ...);
/* The error as "FILE:LINE: reason", "FILE: reason" or "FILE: strerror",
 * malloc'd; NULL without memory. */
char *parser_format_error(const Parser *p);

/* keys.c */
/* The key `name` of [section]: its index, and its definition in *ret; -1
 * when there is none. */
int key_find(const char *section, const char *name, Key *ret);
/* Whether [s[0..n)] is a section of the file. */
bool key_section_known(const char *s, size_t n);
/* Where the files last set the key; 0 when none did (or no such key). */
ParserAt parser_key_at(const Parser *p, const char *section, const char *name);
/* libinih's handler: finds the key, checks it is set once, stores the
 * value. Nonzero to go on. */
int parser_handle(void *userdata, const char *section, const char *name, const char *value);

/* values.c */
/* Validates value and stores it where k says, or records why not. 0,
 * -EINVAL (recorded) or -ENOMEM. */
int key_apply(Parser *p, const Key *k, const char *section, const char *value);

/* reader.c */
/* libinih's reader: checks what only the raw line shows, then hands
 * libinih the line without its indentation; NULL at the end of the input
 * and from the first error on. */
char *parser_read(char *str, int num, void *userdata);

/* checks.c */
/* The checks that span keys, on the parsed Config. */
void parser_check(Parser *p);
/* Where the files set source s's path; 0 when none did, or the source has
 * none. */
ParserAt parser_source_path_at(const Parser *p, ConfigSource s);
