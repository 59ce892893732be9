-- Every carrier on any watchlist (the set change detection compares). Result: dot_number.
SELECT DISTINCT dot_number FROM watchlist ORDER BY dot_number
