"""Tandem's judge: step features and the small classifier that scores how much a step needs the cloud.

A library with no server in it; it never imports `router`.
"""
