// cuberobot firmware: six stepper motors of a Rubik's-cube robot, driven by
// the host over the serial protocol of docs/protocol.md. All the logic lives
// in the .cpp/.h files of this folder (shared with the host unit tests); this
// sketch only hands setup() and loop() to it.
#include "app.h"

void setup() { app_setup(); }

void loop() { app_loop(); }
