"""Scheduling: the review service, its clock and the domain objects screens use."""
