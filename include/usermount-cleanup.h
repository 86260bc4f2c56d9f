/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * _cleanup_() helpers for libusermount's objects, for the library itself and for the code
 * of this tree that uses it (the CLI, the tests); not part of the public header.
 */
#pragma once

#include "macro.h"
#include "usermount.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(usermount_client *, usermount_client_unref);
DEFINE_TRIVIAL_CLEANUP_FUNC(usermount_options *, usermount_options_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(usermount_info *, usermount_info_free);
