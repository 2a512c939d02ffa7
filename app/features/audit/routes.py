from tenchi.routes import route_group

from ..memory.routes.binding import bind
from .contracts import read_audit_contract
from .use_cases.read_audit import read_audit

routes = route_group(bind(read_audit_contract, read_audit))
