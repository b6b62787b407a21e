#define CR_PINS_MEGA 1
#include "pins.h"
#include "pinmap.h"
#include "pinmap_table.h"

const struct pinmap pinmap_mega = PINMAP_INIT("mega");
