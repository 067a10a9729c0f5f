/**
 * The CSI Controller calls the test harness makes in external-provisioner's
 * place: `CreateVolume` on a driver's socket gives a PV's volumeHandle (the
 * hostpath driver refuses unknown handles with NotFound), `DeleteVolume`
 * removes it.
 *
 *   const handle = await createCsiVolume(driver.endpointSocket, 'pv-name', 1024 * 1024);
 */
import * as grpc from '@grpc/grpc-js';
import { loadCsi } from '../../sockets/csi.ts';
import { unixTarget } from '../../sockets/dial.ts';

function client(socket: string) {
  const Controller = loadCsi().Controller;
  return new Controller(unixTarget(socket), grpc.credentials.createInsecure());
}

/** CreateVolume(name, required bytes, SINGLE_NODE_WRITER mount) → the new volume's id. */
export async function createCsiVolume(socket: string, name: string, bytes: number, parameters: Record<string, string> = {}): Promise<string> {
  const c = client(socket);
  try {
    return await new Promise<string>((resolve, reject) =>
      c.CreateVolume(
        {
          name,
          capacity_range: { required_bytes: bytes },
          volume_capabilities: [{ mount: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
          parameters,
        },
        { deadline: Date.now() + 30_000 },
        (err, res) => (err ? reject(err) : resolve(res!.volume!.volume_id)),
      ),
    );
  } finally {
    c.close();
  }
}

/** DeleteVolume(id). */
export async function deleteCsiVolume(socket: string, volumeId: string): Promise<void> {
  const c = client(socket);
  try {
    await new Promise<void>((resolve, reject) =>
      c.DeleteVolume({ volume_id: volumeId }, { deadline: Date.now() + 30_000 }, (err) => (err ? reject(err) : resolve())),
    );
  } finally {
    c.close();
  }
}
