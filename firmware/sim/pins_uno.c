#include "pins.h"
#include "pinmap.h"
#include "pinmap_table.h"

const struct pinmap pinmap_uno = PINMAP_INIT("uno");
