"""The audit log (`log.py`), its delta lines (`delta.py`), its files (`sink.py`) and
`tandem audit expand` (`expand.py`)."""

from router.audit.log import AuditLog, AuditMode, AuditState

__all__ = ["AuditLog", "AuditMode", "AuditState"]
