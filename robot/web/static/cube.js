/* placeholder *//* placeholder *//* placeholder *//* placeholder *//* placeholder *//* placeholder *//* placeholder *//* placeholder *//* placeholder *//* placeholder */
