"""Source files generated from committed runs: the `auto` planner's table."""
