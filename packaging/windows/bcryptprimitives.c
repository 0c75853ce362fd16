/*
 * bcryptprimitives.c -- TEST-ONLY shim of bcryptprimitives.dll for Wine 8.0.
 *
 * Rust's std (1.78+) on x86_64-pc-windows-gnu imports ProcessPrng from
 * bcryptprimitives.dll for HashMap's RandomState and other randomness.
 * Real Windows 10 and later ship that DLL; Wine 8.0 (Debian 12) does not,
 * so every Rust .exe fails to load there. .ci/wine-runner builds this file
 * into target/wine/bcryptprimitives.dll and copies it beside the .exe that
 * cargo runs under Wine.
 *
 * It MUST NEVER ship in the release zip or any other package: on real
 * Windows the system DLL is the right one, and a copy beside iosim.exe
 * would shadow it with this weaker stand-in.
 *
 * Build (what .ci/wine-runner does):
 *   x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll \
 *       bcryptprimitives.c bcryptprimitives.def -ladvapi32
 */
#include <windows.h>

/* RtlGenRandom is exported by advapi32 as SystemFunction036. */
BOOLEAN WINAPI SystemFunction036(PVOID RandomBuffer, ULONG RandomBufferLength);

/*
 * Same contract as the real one: fill pbData with cbData random bytes and
 * return TRUE (the real ProcessPrng is documented to always succeed).
 * RtlGenRandom takes a ULONG length, so feed it in chunks.
 */
BOOL WINAPI ProcessPrng(PBYTE pbData, SIZE_T cbData)
{
    while (cbData > 0) {
        ULONG chunk = cbData > 0x40000000u ? 0x40000000u : (ULONG)cbData;
        if (!SystemFunction036(pbData, chunk))
            return FALSE;
        pbData += chunk;
        cbData -= chunk;
    }
    return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved)
{
    (void)inst;
    (void)reason;
    (void)reserved;
    return TRUE;
}
