import pytest

from reference import DTYPES


@pytest.fixture(params=DTYPES, ids=str)
def dtype(request):
    return request.param
