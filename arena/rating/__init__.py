"""From records to standings: statistics, ratings, comparisons and reports."""
