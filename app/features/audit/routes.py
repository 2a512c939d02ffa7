from app.shared.bindings import Binding

from .contracts import read_audit_contract
from .use_cases.read_audit import read_audit

bindings = (Binding(read_audit_contract, read_audit),)
