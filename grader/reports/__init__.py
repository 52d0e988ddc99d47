"""Class reports for instructors: what the class got wrong, who copied, what a regrade changes (docs/GRADING.md)."""

OUT = "reports"   # the reports' folder in the course directory
