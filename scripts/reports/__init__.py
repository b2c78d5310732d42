"""Reports, tables, plots and the dashboard from distancies-bench JSON."""
