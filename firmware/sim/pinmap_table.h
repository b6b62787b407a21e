/* Included once per board by pins_uno.c / pins_mega.c after pins.h. */
#define PM_STR_(x) #x
#define PM_CH(x) (PM_STR_(x)[0])
#define PINMAP_INIT(name)                                                         \
  {                                                                               \
    name, PM_CH(CR_STEP_PORT),                                                    \
        {CR_STEP0_BIT, CR_STEP1_BIT, CR_STEP2_BIT, CR_STEP3_BIT, CR_STEP4_BIT,    \
         CR_STEP5_BIT},                                                           \
        {PM_CH(CR_DIR0_PORT), PM_CH(CR_DIR1_PORT), PM_CH(CR_DIR2_PORT),           \
         PM_CH(CR_DIR3_PORT), PM_CH(CR_DIR4_PORT), PM_CH(CR_DIR5_PORT)},          \
        {CR_DIR0_BIT, CR_DIR1_BIT, CR_DIR2_BIT, CR_DIR3_BIT, CR_DIR4_BIT,         \
         CR_DIR5_BIT},                                                            \
        PM_CH(CR_EN_PORT), PM_CH(CR_BUTTON_PORT), PM_CH(CR_ESTOP_PORT),           \
        PM_CH(CR_LED_PORT), CR_EN_BIT, CR_BUTTON_BIT, CR_ESTOP_BIT, CR_LED_BIT    \
  }
